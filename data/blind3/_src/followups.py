# (corpus, first, follow_up, doc_id or None, phrase or None)
FOLLOWUPS = [
("sample", "How much annual leave does a full-time employee get?", "and after 10 years?", "annual-leave", "30 days"),
("sample", "What's the per diem for a full day in another EU country?", "and on the day I fly back?", "expenses-per-diem", "35 EUR"),
("sample", "What's the weekly on-call allowance for the primary engineer?", "what about public holidays during the shift?", "on-call-rotation", "50 EUR per holiday"),
("sample", "How long is an on-call shift?", "and how much does the tertiary engineer get paid?", None, None),
("handbook", "How heavy is the NWA-C200?", "and how much power does the C400 draw?", "fe-appliance-reference", "650 W"),
("handbook", "How often should I check in when I'm working alone?", "what happens if i miss one?", "fe-lone-working", "the field coordinator calls you"),
("handbook", "What does a steady green status LED mean?", "and if it's blinking green?", "fe-appliance-reference", "Firmware update in progress"),
("handbook", "How many pool cars are in Amsterdam?", "and in Rotterdam?", None, None),
("moj", "What's the minimum number of people for an out-of-hours rota?", "and how far ahead should it be planned?", "moj-out-of-hours", "at least three months ahead"),
("moj", "Which platform should new MOJ services be hosted on?", "and legacy ones?", "moj-hosting", "Modernisation Platform"),
("moj", "Which licence does MOJ use for its code?", "what should I call the file?", "moj-licencing-software-or-code", "LICENCE.md"),
("moj", "What tool does MOJ use to page people on call?", "how much are they paid per week for being on call?", None, None),
("thoughtbot", "How long can the summary line of a commit message be?", "and the lines below it?", "thoughtbot-git", "under 72 characters"),
("thoughtbot", "Which database does thoughtbot use by default?", "and for messages between services?", "thoughtbot-tech-stack", "Use Kafka when producing"),
("thoughtbot", "Where do I report a security vulnerability to thoughtbot?", "and where is it discussed further?", "thoughtbot-security", "Security Basecamp"),
("thoughtbot", "What language is used for native Android apps?", "and what's the minimum Android SDK version?", None, None),
]
