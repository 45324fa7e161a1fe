"""The texts of the PII set (see ``pii_set``): enterprise documents with slots for planted values
(HR letters, support tickets, CVs, invoices, e-mails, meeting notes) and clean enterprise texts with
no personal data at all (policies, runbooks, release notes, with amounts, versions, ticket ids,
durations and product names), which measure over-redaction.
"""

from __future__ import annotations



# Slots: {p1} {p2} (a person's name as first written, prefix kept outside the value),
# {p1.first} {p1.last} (later mentions of the same person), {addr}, {phone}, {phone2}, {card},
# {iban}, {email}, {email2}, {ip}, {ssn}, {org}, {org2}, {date}, {date2}, {domain}, {job}, {n}.
PII_TEMPLATES: dict[str, str] = {
    "hr_offer": (
        "{p1}\n{addr}\n\nDear {p1.first},\n\nWe are pleased to offer you the position of {job} at {org}, starting on "
        "{date}. Your manager will be {p2}. Please sign and return this letter to HR by e-mail ({email}) or call "
        "us on {phone} if anything is unclear. Salary is paid monthly to the account you provided (IBAN {iban}).\n\n"
        "Kind regards,\nPeople Team"
    ),
    "hr_leave": (
        "Subject: Leave request approved\n\nHi {p1.first}, your parental leave from {date} to {date2} has been "
        "approved by {p2}. Payroll will continue to pay into IBAN {iban}. If your home address changes from {addr}, "
        "update it in the HR portal. Questions: {email} or {phone}."
    ),
    "ticket": (
        "INC-{n}: VPN drops every ten minutes\nReporter: {p1} ({email})\nCallback: {phone}\nAffected host: {ip}\n"
        "Description: Since the update on {date} the client disconnects. {p1.first} tried reinstalling. "
        "Assigned to {p2}, network team. Customer account: {org}."
    ),
    "ticket_access": (
        "Access request #{n}. {p1} from {org} asks for read access to the finance share. Approver: {p2}. "
        "Request raised from {ip} at {date}. Contact the requester on {phone} or {email} before granting."
    ),
    "cv": (
        "CURRICULUM VITAE\n{p1}\n{addr} | {phone} | {email}\nBorn {date}\n\nExperience\n{job}, {org} "
        "(2016-2021): led a team of six, migrated billing to the cloud.\n{job2}, {org2} (2012-2016).\n"
        "References available from {p2} on request."
    ),
    "invoice": (
        "INVOICE {n}\nBill to: {org}, attn. {p1}, {addr}\nDate: {date}\nAmount due: EUR 4,250.00 (net 30 days)\n"
        "Pay by transfer to IBAN {iban} or by card {card}.\nQueries: {email}, tel. {phone}."
    ),
    "payment": (
        "Payment note: {p1} paid the conference fee with card {card} on {date}. The receipt was sent to {email}. "
        "Refunds, if any, go to IBAN {iban}. Our contact at {org} is {p2}."
    ),
    "benefits": (
        "Benefits enrolment for {p1}: social security number {ssn}, two dependants, plan gold. Confirmation was "
        "sent to {email}. The employee lives at {addr} and can be reached on {phone}. Date of birth: {date}."
    ),
    "email_thread": (
        "From: {p1} <{email}>\nTo: {p2} <{email2}>\nSent: {date}\n\nHi {p2.first},\nthanks for the call. As agreed, "
        "{org} will send the signed contract by Friday. My direct line is {phone}. Details are on {domain}.\n"
        "Best, {p1.first}"
    ),
    "meeting": (
        "Minutes of the steering meeting held on {date}. Present: {p1}, {p2}, {p3}. {p1.last} reported that "
        "{org} accepted the offer. {p3.first} will follow up with {org2} and share the slides on {domain}. "
        "Next meeting: {date2}."
    ),
    "security": (
        "Security incident SEC-{n}: failed logins for {email} from {ip} and {ip2}. The account owner, {p1}, "
        "confirmed the attempts were not hers. Card {card} linked to the account was blocked. "
        "Escalated to {p2} on {phone}."
    ),
    "shipping": (
        "Delivery instructions: ship the replacement laptop to {p1}, {addr}. Phone on arrival: {phone}. "
        "Cost centre owner {p2} approved it on {date}. Carrier account belongs to {org}."
    ),
    "reference": (
        "To whom it may concern,\n{p1} worked for {org} as a {job} from {date} until {date2}. {p1.first} was "
        "reliable and well liked. I am happy to give more detail: {p2}, {phone}, {email}."
    ),
    "expense": (
        "Expense claim {n} by {p1}: hotel in the city centre, 3 nights, EUR 612.40, paid with {card}. Reimburse "
        "to IBAN {iban}. Approved by {p2} on {date}."
    ),
    "it_asset": (
        "Asset handover: laptop SN-{n} with static IP {ip} goes to {p1} ({email}) at {org}. The previous user, "
        "{p2}, returned the charger. Registered on {domain} under SSN {ssn} for the payroll link."
    ),
    "payroll": (
        "Payroll change for {p1} (SSN {ssn}): new salary effective {date}, paid to IBAN {iban}. Tax forms were "
        "posted to {addr}. HR contact: {p2}, {phone}."
    ),
    "dmv_check": (
        "Pre-employment check for {p1}: driver's license {dl} ({st}), clean record. Commercial vehicles only "
        "with a CDL. Home ZIP code {zip}. Verified by {p2} on {date}; questions to {wphone}."
    ),
    "kyc_form": (
        "KYC record\nName: {p1}\nNationality: {nrp}\nResidential address:\n{addrblock}\nPhone: {wphone}\n"
        "DL number: {dl}\nCard on file: {cardx}\nChecked by {p2}."
    ),
    "card_dispute": (
        "Chargeback {n}: the holder {p1} disputes two payments on card {cardx}, both made on {date}. A second "
        "card, {cardx2}, was issued as a replacement. Call back on {wphone} or {wphone2}."
    ),
    "mailing_label": (
        "Return to sender if undeliverable.\n\n{p1}\n{addrblock}\n\nTracking {n}, parcel 2 of 3."
    ),
    "diversity_survey": (
        "Voluntary survey from {p1}: identifies as {nrp}, religion {nrp2}. Prefers to be contacted at {email}. "
        "Postal code: {zip}."
    ),
    "contact_card": (
        "{p1}\n{job}, {org}\nMobile {wphone} | Office {wphone2}\n{addrblock}"
    ),
    "community_note": (
        "{p1} told the panel that as a {nrp} voter she supported the proposal; {p2}, a {nrp2} member of the "
        "committee, asked for the minutes. Both live in the {zip} area."
    ),
    "relocation": (
        "Relocation approved: {p1} moves from {addr} to the new office. Until then use the old number {wphone} "
        "and the payment card {cardx}. Driving licence no. {dl} is needed for the pool car."
    ),
    "customer_note": (
        "Customer call log: {p1} of {org} called from {phone} about invoice {n}. Asked us to use the new billing "
        "address {addr} and to e-mail {email}. Follow-up by {p2} before {date}."
    ),
}

CLEAN_TEMPLATES: tuple[str, ...] = (
    "Travel policy: book travel through the portal at least fourteen days in advance. Hotel costs above the city "
    "limit of EUR {amount} need approval from a director. Receipts are uploaded within 30 days; late claims are "
    "paid in the next cycle. Rail is preferred for trips under four hours.",
    "Release notes v{v1}.{v2}.{v3}: the export job now streams rows instead of loading the whole table, cutting "
    "memory use by {pct}%. The retry limit was raised from 3 to 5. Ticket INC-{n} is fixed. Upgrade the agent "
    "before the next maintenance window.",
    "Runbook: when the queue depth exceeds {n2} messages for more than 10 minutes, scale the worker pool to "
    "{workers} replicas, check the dead-letter queue and restart the consumer if it is stuck. Record the action "
    "in the change log with the change number CHG-{n}.",
    "Quarterly review: revenue grew {pct}% year over year to {amount} thousand, operating margin was {pct2}%. "
    "The {job} role remains open. Priorities for the next quarter are {bs}, cost control and customer retention.",
    "Onboarding checklist: collect the laptop from the service desk, enrol in multi-factor authentication, "
    "complete the security training within two weeks and read the code of conduct. Your manager schedules a "
    "check-in after 30 days and again after 90 days.",
    "Procurement guideline: purchases above {amount} need three quotes. Framework agreements cover office "
    "supplies and cloud capacity. Purchase order PO-{n} was approved; delivery takes 5 to 7 working days.",
    "Incident postmortem: the cache cluster ran out of memory after a configuration change raised the key "
    "TTL to {n3} seconds. Latency p99 rose to {lat} ms for 42 minutes. Action items: add an alert on eviction "
    "rate, document the TTL limits and review config changes in pairs.",
    "Data retention: application logs are kept for 90 days, audit logs for 7 years and backups for 35 days. "
    "Personal data is deleted when the purpose ends. Exceptions need approval from the data protection office.",
    "Product brief: {catch}. The new dashboard shows {bs} in real time and exports to CSV and PDF. Pricing "
    "starts at {amount} per seat per month, with a 15% discount on annual plans.",
    "Maintenance notice: the database will be upgraded to version {v1}.{v2} on the first Saturday of the month "
    "between 02:00 and 04:00 UTC. Read-only mode applies during the window; jobs scheduled then will run "
    "afterwards.",
    "Expense policy: meals are reimbursed up to {amount2} per day, taxis only after 22:00 or with luggage. "
    "Mileage is paid at 0.30 per kilometre. Claims go through the finance system with the cost centre CC-{n4}.",
    "Capacity plan: storage grows by {pct} TB a month; at the current rate the array is full in {months} "
    "months. We propose adding two shelves in the next budget cycle and archiving cold data to object storage.",
    # look-alikes: long digit runs, ids, ISBNs, versions, licences of software, language names
    "Book order: ISBN {isbn}, {n4} copies. Catalogue number {order}, shipped in {n2} boxes; invoice total "
    "USD {amount}. Tracking reference {track}.",
    "Inventory: {n} units in stock across 14 sites. Batch {batch} expires after 18 months; part numbers "
    "A{part} and BX{part2} are discontinued. Reorder point is {n2} units.",
    "Licensing: the SDK ships under the Apache License 2.0 and the client under the MIT license. Renew the "
    "enterprise license before the end of the quarter; {workers} seats are in use, build {v1}.{v2}.{n4}.",
    "Order {order} was dispatched from warehouse {n4}. Build {n} passed 1,284 tests in {n3} ms; coverage is "
    "{pct}.{v3}% and the artefact is {n2} KB.",
    "Localisation: the handbook is available in English, German and French; the Spanish edition follows in "
    "Q{v3}. Translation memory holds {n} segments and {n2} terms.",
)
