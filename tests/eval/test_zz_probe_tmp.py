import json
from tests.eval.test_sample_chat_http import client  # noqa
def test_probe(client):
    for q in ["What is the minimum password length for the guest Wi-Fi network?", "How many days of annual leave do interns get?"]:
        body = client.post("/chat", json={"question": q}).get_json()
        e = body["decision_explain"]
        print("PROBE", body["mode"], body["sources_used"], body["answer"][:400], e["reasons"], e.get("answerability"), body["used_chunks"], [c["marker"] for c in body["citations"]])
