"""What every product PII recognizer shares: a regex recognizer over the text Presidio already
has (no NLP), the result it reports (with the explanation Presidio's context enhancer needs), and
the capitalised-word pattern names, organisations and cities are built from.
"""

from __future__ import annotations

from typing import Any, Iterable

from presidio_analyzer import AnalysisExplanation, LocalRecognizer, RecognizerResult


UPPER = "A-ZÀ-ÖØ-ÞĀ-ſ"  # Latin-1 and Latin Extended-A capitals (and their lower cases, harmless)
CAPITALISED_WORD = rf"[{UPPER}][\w'’-]*"


def recognizer_result(entity: str, start: int, end: int, score: float, name: str) -> RecognizerResult:
    # the engine adds this recognizer's name and id; the context enhancer needs an explanation
    return RecognizerResult(entity, start, end, score,
                            analysis_explanation=AnalysisExplanation(recognizer=name, original_score=score))


class RegexRecognizer(LocalRecognizer):
    """A recognizer whose ``find`` yields ``(start, end, score)``; no NLP artefacts needed."""

    ENTITY = ""

    def __init__(self, language: str = "en", context: list[str] | None = None) -> None:
        super().__init__(supported_entities=[self.ENTITY], supported_language=language, name=type(self).__name__,
                         context=context)

    def load(self) -> None:
        return None

    def find(self, text: str) -> Iterable[tuple[int, int, float]]:
        raise NotImplementedError

    def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None) -> list[RecognizerResult]:
        if self.ENTITY not in entities:
            return []
        name = str(type(self).__name__)
        return [recognizer_result(self.ENTITY, s, e, score, name) for s, e, score in self.find(text)]
