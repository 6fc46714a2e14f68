"""The rule writer (llm=none) reads English documents only: others are left out with a count, and a
corpus with no English document is refused with what to use instead (gen/language.py, gen/rules.py).
The German, Arabic and Chinese texts are written for these tests."""

from __future__ import annotations

import logging

import pytest

from ragsweep.gen.documents import Corpus, Document, read_shipped
from ragsweep.gen.gates import GateConfig
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.language import language_of
from ragsweep.gen.rules import RuleWriter
from ragsweep.metrics.errors import InputError

GERMAN = ("Der Hafen von Port Calder wurde im Jahr 1890 eröffnet und hat seitdem zwei lange Piers. Die Fähren der "
          "Calder Reederei fahren jede Stunde vom Nordpier ab, im Sommer auch zu den Inseln. Die Stadt wird von einem "
          "direkt gewählten Bürgermeister und einem Stadtrat mit 45 Mitgliedern regiert, der alle vier Jahre gewählt "
          "wird. Die Drehbrücke über den Fluss wurde im Jahr 1931 von der Firma Ashby gebaut.")
ARABIC = ("افتتح ميناء بورت كالدر في عام 1890 وله رصيفان طويلان منذ ذلك الحين. تغادر العبارات كل ساعة من الرصيف "
          "الشمالي، وفي الصيف توجد رحلات إضافية إلى الجزر. يحكم المدينة عمدة منتخب مباشرة ومجلس مدينة من 45 عضوا "
          "ينتخب كل أربع سنوات.")
CHINESE = ("卡尔德港于1890年开放，此后一直有两个长码头。渡轮每小时从北码头出发，夏季还有前往岛屿的额外航班。"
           "该市由直接选举产生的市长和由45名成员组成的市议会管理，市议会每四年选举一次。")
ENGLISH = ("Port Calder's harbour opened in 1890 and has had two long piers since then. Ferries leave every hour from "
           "the north pier, and in summer there are extra sailings to the islands.")

CFG = GenConfig(n=4, seed=3, kinds=(("single_hop", 1.0),), gates=GateConfig(roundtrip=False))


@pytest.mark.parametrize("text, english, problem", [
    (ENGLISH, True, None),
    (GERMAN, False, "in Latin letters but not English"),
    (ARABIC, False, "written in Arabic script"),
    (CHINESE, False, "written in Chinese or Japanese (CJK) script"),
    ("Calder 1890.", True, None),  # too few words to judge by function words, and Latin
])
def test_the_language_check_tells_english_from_german_arabic_and_chinese(text, english, problem):
    found = language_of(text)
    assert found.english is english
    assert (found.problem() or "").startswith(problem or "")
    assert (found.problem() is None) is english


@pytest.mark.parametrize("text, says", [(GERMAN, "in Latin letters but not English"),
                                        (ARABIC, "written in Arabic script"),
                                        (CHINESE, "written in Chinese or Japanese (CJK) script")])
def test_the_rule_writer_refuses_a_corpus_with_no_english_document(text, says):
    corpus = Corpus([Document("a.txt", text), Document("b.txt", text.replace("1890", "1891"))], "kb")
    with pytest.raises(InputError) as err:
        generate(corpus, RuleWriter(), CFG)
    message = str(err.value)
    assert message.startswith("kb: the rule writer (llm=none) writes English questions only, and none of the 2")
    assert says in message and "llm=local" in message


def test_a_mixed_corpus_is_questioned_on_its_english_documents_only(caplog):
    shipped = read_shipped()
    others = [Document("de.txt", GERMAN), Document("ar.txt", ARABIC), Document("zh.txt", CHINESE)]
    corpus = Corpus(list(shipped.documents) + others, "mixed")
    with caplog.at_level(logging.WARNING):
        result = generate(corpus, RuleWriter(), CFG)
    assert len(result.samples) == 4
    assert not {e.doc_id for s in result.samples for e in s.evidence} & {"de.txt", "ar.txt", "zh.txt"}
    assert result.report.units["not_english_documents"] == 3
    assert "left out 3 of 31 documents not in English" in caplog.text
