"""Is a document English prose? What the rule writer (``llm=none``) needs to know before it writes.

The rule writer's templates ("in what year?", "how many ...?") and its sentence and name finders are
English; on other text it writes questions half in English, or finds no sentence it can use. So it
reads only English documents, judged by two measures that need no list of phrasings:

- the **script**: the share of letters that are Latin (Unicode names); a text written mostly in
  another script (Arabic, CJK, Cyrillic, ...) is not English, and the script is named;
- the **function words**: the share of words that are among the commonest English function words
  (articles, prepositions, pronouns, auxiliaries). English prose, technical documentation and
  abstracts alike hold many of them; German, French or Spanish in Latin letters hold few (the words
  the languages share: "in", "a", "was"), so one threshold (:data:`MIN_FUNCTION`) tells them apart.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from ragsweep.metrics.lexicon import FUNCTION_WORDS

MIN_LATIN = 0.5        # below this share of Latin letters, a text is in another script
MIN_FUNCTION = 0.08    # below this share of English function words, Latin-script text is another language
MIN_WORDS = 20         # fewer words than this: too few to judge by function words (the script still counts)
_WORD = re.compile(r"[^\W\d_]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_SCRIPT_NAMES = {"CJK": "Chinese or Japanese (CJK)", "HANGUL": "Korean (Hangul)"}


@dataclass(frozen=True)
class Language:
    """What the two measures found in one text.

    Attributes:
        latin: Share of letters that are Latin (1.0 for a text with no letters).
        script: The commonest script among the letters (``LATIN``, ``ARABIC``, ``CJK``, ...).
        function: Share of words that are English function words (None when too few words to judge).
        words: How many words the text has.
    """

    latin: float
    script: str
    function: float | None
    words: int

    @property
    def english(self) -> bool:
        return self.latin >= MIN_LATIN and (self.function is None or self.function >= MIN_FUNCTION)

    def problem(self) -> str | None:
        """Why the text is not English, in words; None when it is."""
        if self.latin < MIN_LATIN:
            name = _SCRIPT_NAMES.get(self.script, self.script.title())
            return f"written in {name} script ({1 - self.latin:.0%} of its letters are not Latin)"
        if self.function is not None and self.function < MIN_FUNCTION:
            return (f"in Latin letters but not English: {self.function:.0%} of its words are common English words "
                    f"(English text: 13% or more)")
        return None


def _script(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return "CJK" if name.startswith(("CJK", "HIRAGANA", "KATAKANA")) else (name.split(" ")[0] or "UNKNOWN")


def language_of(text: str) -> Language:
    """The script and function-word measures of ``text`` (see the module docstring)."""
    words = _WORD.findall(text.lower())
    # ASCII letters are Latin: only the other characters need their Unicode names (fast on English text)
    scripts = Counter(_script(ch) for ch in _NON_ASCII.findall(text) if ch.isalpha())
    scripts["LATIN"] += sum(len(w) if w.isascii() else sum(c.isascii() for c in w) for w in words)
    letters = sum(scripts.values())
    latin = scripts["LATIN"] / letters if letters else 1.0
    script = scripts.most_common(1)[0][0] if letters else "LATIN"
    function = sum(w in FUNCTION_WORDS for w in words) / len(words) if len(words) >= MIN_WORDS else None
    return Language(latin, script, function, len(words))
