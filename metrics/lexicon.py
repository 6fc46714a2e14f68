"""The word lists of the generator and of the offline (no LLM) judge, in one place.

Each list is a closed class of English words (function words, pronouns, ordinals, month names), not
phrasings to match. A list says on its line what it is for; two lists that look alike are kept apart where
their callers need different members (:data:`STOP` and :data:`QUESTION_STOP`, :data:`NOT_NAMES` and
:data:`SENTENCE_OPENERS`): merging them would change what those callers accept.
"""

from __future__ import annotations

#: Words that carry no content: left out when the offline judge and the generator compare content words.
STOP = frozenset("""a an the and or but if of to in on at by for with from as is are was were be been being
it its it's this that these those he she they them his her their him we you i me my our your not no yes do does did
has have had will would can could should may might shall which who whom whose what when where why how than then
there here so such also very more most some any all each both about into over after before during while up down out
off again further once only own same too s t just don now one many much other another being am let us per via
""".split())

#: Number words read as their digits ("twelve" -> "12") when numbers are compared.
NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}

#: Words left out of a question's tokens when its overlap with its evidence is measured (gates).
QUESTION_STOP = frozenset("""a an the of in on at to for from by with and or but is are was were be been being it its
this that these those as into than then there their they he she his her them which who whom whose what when
where why how do does did has have had not no yes can could would should will may might also such
during after before about over under between within per s""".split())

#: Capitalised words that are not a name where a question's names are collected (gates).
NOT_NAMES = frozenset("""The A An In On At By For From After Before During Later Then He She It They His Her Its
Their This That These Those There Born What Who Which When Where Why How""".split())

#: Capitalised words that open a sentence but are not an entity: stripped from the front of an entity (units).
SENTENCE_OPENERS = {"The", "A", "An", "In", "On", "It", "Its", "This", "That", "These", "Those", "He", "She",
                    "They", "We", "Our", "His", "Her", "Their", "After", "Before", "When", "While", "At", "By",
                    "For", "From", "As", "However", "Although", "During", "Since", "There", "Here", "With",
                    "Of", "To", "But", "And", "Or", "If", "Because", "Unlike", "Like", "Following", "Each"}

#: Words that cannot follow a number as its unit ("45 and" is the number alone) (units).
NON_UNIT_WORDS = {"and", "or", "to", "the", "a", "of", "in", "on", "at", "for", "with", "by", "was", "were",
                  "is", "are", "from", "as", "than", "that", "which", "but"}

#: Month names, in order: dates in the text, and calendar words that are not an answer on their own (units).
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")

#: Day names: calendar words that are not an answer on their own (units).
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

#: Ordinal words, in order ("first" is 1): an ordinal that picks one of a series (gates).
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
            "eleventh", "twelfth")

#: The commonest English function words, whose share tells English text from another language (language).
FUNCTION_WORDS = frozenset(
    "the of and to a in is was for on that with as by at from it an are be this which or has had were its "
    "his her their not but have been they he she we you i will would can there than also after into these "
    "those such each other between when where who what how all more most no one two may should could do does "
    "if then so about over under our your them him".split())

#: Prepositions that open a title-like phrase ("Under the Authority"), which is then not a name (rules).
PREPOSITIONS = frozenset("under above near across along through behind beyond inside outside toward towards upon "
                         "within without against among around beside".split())

#: Subject, possessive and object forms of the pronoun a follow-up puts in place of its subject (followup).
PRONOUN_FORMS = {"it": ("it", "its", "it"), "she": ("she", "her", "her"), "he": ("he", "his", "him")}

#: Words by which a follow-up refers back to the first turn (followup).
BACK_REFERENCES = frozenset("it its itself he him his himself she her hers herself they them their theirs "
                            "themselves this that these those there then".split())

#: The pronoun a sentence's opening word stands for ("Its ferries ..." -> "it") (followup, rules).
PRONOUN_OF_OPENER = {"it": "it", "its": "it", "she": "she", "her": "she", "he": "he", "his": "he", "they": "they",
                     "their": "they"}

#: Content-word keys of the nouns a wh-phrase brings ("in what year", "what percentage", "how much"): the
#: question's own words, not the corpus's (absence).
WH_NOUNS = frozenset({"year", "date", "numbe", "perce", "amoun", "value", "name", "title"})
