from tests.eval.test_promotion import _evaluator, promote_version
def test_probe(eval_settings, eval_store, embedder, sample_golden):
    report = _evaluator(eval_settings, eval_store, embedder).evaluate("KB_SAMPLE_V1", sample_golden)
    print("PROBE", report.counts, report.metrics, report.mode_confusion)
    for q in report.queries:
        if q.id in ("s01", "s39"): print("PROBE", q.id, q.decided_mode, q.ranked_doc_ids[:2])
    result = promote_version(eval_settings, eval_store, embedder, domain_key="handbook")
    print("PROBE", result.promoted, result.report.counts, result.report.metrics, [(g.name, g.passed) for g in result.gates])
