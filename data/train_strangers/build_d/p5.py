from lib import *
K = dict(p="paraphrase", s="short", t="typo", T="table", L="lookalike", O="offtopic")
def Q(*items): return [(q, K[k], a) for q, k, a in items]
C = "owasp-cheatsheets"

d = "Vulnerability_Disclosure_Cheat_Sheet.md"
x = cut(d, "Responsible disclosure attempts to find a reasonable middle ground", "regardless of whether or not the organization has published a patch.")
P(C, d, x, Q(
 ("In coordinated disclosure, when do the full details go public?", "p", "With responsible disclosure, the initial report is made privately"),
 ("what if the company misses the researcher's deadline", "p", "If this deadline is not met"),
 ("How long does Project Zero wait before publishing bug details?", "p", "Google's [Project Zero]"),
 ("Does Project Zero hold back details if there's still no patch?", "p", "Google's [Project Zero]"),
 ("project zero disclosure deadline", "s", "Google's [Project Zero]"),
 ("How long must we wait after a patch before publishing?", "L", "With responsible disclosure, the initial report is made privately"),
 ("What deadline does Microsoft give vendors before disclosing?", "L", "Google's [Project Zero]"),
 ("How many days does a vendor get to acknowledge a report?", "L", "In many cases, the researcher also provides a deadline"),
 ("Where can I find the template for a project status report?", "O", None),
))

x = cut(d, "Bug bounty programs incentivize researchers to identify and report vulnerabilities", "The timeline for the initial response, confirmation, payout and issue resolution.")
P(C, d, x, Q(
 ("Are bug bounty rewards always cash?", "p", "These are usually monetary"),
 ("Who usually runs bug bounty programs for companies?", "p", "The process is often managed through a third party"),
 ("Should the bounty scope include systems a third party owns?", "p", "Excluding systems managed or owned by third parties."),
 ("what's the risk of paying too little for bounties", "p", "Too little and researchers may not bother"),
 ("bounty legal safe harbor?", "s", "Legal provisions such as safe harbor policies."),
 ("Where can I get example safe harbor wording?", "p", "The [disclose.io](https://disclose.io) project"),
 ("How much does HackerOne charge to run a program?", "L", "The process is often managed through a third party"),
 ("What's a typical payout for a critical bug?", "L", "How much to offer for bounties"),
 ("How many days should we take to send the first response to a bounty report?", "L", "The timeline for the initial response"),
 ("Who do I ask about getting a company credit card?", "O", None),
))

x = cut(d, "Bug bounty have been adopted by many large organizations such as Microsoft", "being angry when reported issues are duplicates or out of scope).")
P(C, d, x, Q(
 ("What are the downsides of a bug bounty for a small company?", "p", "However, for smaller organizations they can bring significant challenges"),
 ("Can a managed bug bounty help sort through junk reports?", "p", "Managed bug bounty programs may help"),
 ("how much do some companies pay out in bounties each year", "p", "The financial cost of running the program"),
 ("Which government department has a bug bounty?", "p", "Bug bounty have been adopted by many large organizations"),
 ("bug bounty false positives?", "s", "Dealing with large numbers of false positives"),
 ("What does a managed triage service cost per report?", "L", "Managed bug bounty programs may help"),
 ("How many staff do we need to run a bounty program?", "L", "Having sufficient time and resources"),
 ("Which big companies have stopped their bug bounty programs?", "L", "Bug bounty have been adopted by many large organizations"),
 ("Is there a company policy on dating coworkers?", "O", None),
))

x = cut(d, "The most important step in the process is providing a way for security researchers", "who to escalate these reports to within the organization.")
P(C, d, x, Q(
 ("Where should a security.txt file go on our website?", "p", "A [security.txt](https://securitytxt.org) file"),
 ("what email address do people usually use to report security bugs", "p", "The common `security@` email address."),
 ("What should the people who answer the phones know about security reports?", "p", "It is also important to ensure that frontline staff"),
 ("Why make it easy for researchers to reach us?", "p", "The easier it is for them to do so"),
 ("security.txt location", "s", "A [security.txt](https://securitytxt.org) file"),
 ("wher do researchers report securty issues", "t", "The following list includes some of the common mechanisms"),
 ("What fields are required inside security.txt?", "L", "A [security.txt](https://securitytxt.org) file"),
 ("Who monitors the security@ mailbox at weekends?", "L", "The common `security@` email address."),
 ("What phone number should researchers call for urgent issues?", "L", "A dedicated security contact on the \"Contact Us\" page."),
 ("How do I set up a recurring calendar invite?", "O", None),
))

x = cut(d, "The outline below provides an example of the ideal communication process:", "hasn't been forgotten about.")
P(C, d, x, Q(
 ("When do we tell the researcher what reward they'll get?", "p", "Confirm the details of any reward or bounty offered."),
 ("After acknowledging a report, what timeline do we give?", "p", "Acknowledge the vulnerability details and provide a timeline"),
 ("do we keep updating the researcher even without a firm fix date", "p", "Throughout the process, provide regular updates"),
 ("Can we ask the researcher to check our fix?", "p", "If required, request the researcher to retest"),
 ("researcher status updates?", "s", "Throughout the process, provide regular updates"),
 ("How many days do we have to acknowledge a vulnerability report?", "L", "Acknowledge the vulnerability details and provide a timeline"),
 ("Do we pay researchers for retesting the fix?", "L", "If required, request the researcher to retest"),
 ("Should the researcher be told who in our company fixed the bug?", "L", "Confirm that the vulnerability has been resolved."),
 ("What's the policy on personal use of company phones?", "O", None),
))

x = cut(d, "Some individuals may approach an organization claiming to have found a vulnerability", "as scammers are unlikely to be willing to use these platforms.")
P(C, d, x, Q(
 ("Someone says they found a hole in our site and wants money first - what do we do?", "p", "One option is to request that they carry out the disclosure"),
 ("are people who demand payment before sharing bug details usually legit", "p", "Although these requests _may_ be legitimate"),
 ("Why does a bug bounty platform help with pay-first demands?", "p", "One option is to request that they carry out the disclosure"),
 ("pay-first vulnerability claims?", "s", "Although these requests _may_ be legitimate"),
 ("Should we report pay-first demands to the police?", "L", "Although these requests _may_ be legitimate"),
 ("Which bug bounty platform is cheapest for mediated disclosure?", "L", "One option is to request that they carry out the disclosure"),
 ("How much should we pay someone who reports a real vulnerability without asking?", "L", "Some individuals may approach an organization"),
 ("Who organises the summer party?", "O", None),
))

x = cut(d, "At a minimum, the security advisory must contain:", "IDS/IPS signatures or other indicators of compromise.")
P(C, d, x, Q(
 ("What has to go in a security advisory at the very least?", "p", "At a minimum, the security advisory must contain:"),
 ("does the advisory need a CVE number", "p", "A [CVE](https://cve.mitre.org/cve/request_id.html) for the vulnerability."),
 ("Should we credit the researcher in the advisory?", "p", "Credit for the researcher who identified the vulnerability."),
 ("Do we list temporary workarounds in the advisory?", "p", "Any workarounds or mitigation"),
 ("advisory affected versions?", "s", "A clear list of vulnerable versions."),
 ("Must the advisory include a CVSS score?", "L", "A [CVE](https://cve.mitre.org/cve/request_id.html) for the vulnerability."),
 ("Should the advisory include the researcher's email address?", "L", "Credit for the researcher who identified the vulnerability."),
 ("Does the advisory need to list the customers who were affected?", "L", "A high level summary of the vulnerability"),
 ("Where do I find the brand guidelines for slide decks?", "O", None),
))

x = cut(d, "Security advisories should be easy for developers and system administrators to find.", "- Linked from the main changelogs and release notes.")
P(C, d, x, Q(
 ("Where should we publish security advisories so admins see them?", "p", "Security advisories should be easy"),
 ("can we post advisories on a mailing list", "p", "A security mailing list or forum."),
 ("Should release notes link to the advisory?", "p", "Linked from the main changelogs and release notes."),
 ("advisories page on website?", "s", "A dedicated \"security\" or \"security advisories\" page"),
 ("Should advisories be pushed to customers by SMS?", "L", "A security mailing list or forum."),
 ("How long do advisories stay on the website?", "L", "A dedicated \"security\" or \"security advisories\" page"),
 ("Who approves an advisory before it's published?", "L", "Security advisories should be easy"),
 ("How do I enrol in the pension plan?", "O", None),
))

x = cut(d, "Where researchers have identified and reported vulnerabilities outside of a bug bounty program", "or other similar acknowledgement.")
P(C, d, x, Q(
 ("We have no bounty program - how can we thank a researcher who reported a bug?", "p", "Where researchers have identified and reported vulnerabilities"),
 ("can we give swag as thanks for a bug report", "p", "T-shirts, stickers and other branded items"),
 ("Is a hall of fame listing an acceptable reward?", "p", "Credit in a \"hall of fame\""),
 ("What if we can't pay cash rewards?", "p", "If monetary rewards are not possible"),
 ("discount as reward?", "s", "Discounts or credit for services or products"),
 ("What cash amount should we pay researchers outside a bounty program?", "L", "Where researchers have identified and reported vulnerabilities"),
 ("Should researchers who were rude still get a reward?", "L", "Where researchers have identified and reported vulnerabilities"),
 ("Can we give gift cards as a reward?", "L", "Discounts or credit for services or products"),
 ("Who handles visa sponsorship for new hires?", "O", None),
))

x = cut(d, "When this happens, there are a number of options that can be taken.", "- Move on.")
P(C, d, x, Q(
 ("The vendor ignores my report - what are my options?", "p", "When this happens, there are a number of options"),
 ("could I report the bug to a regulator instead", "p", "Report the vulnerability to a third party"),
 ("Is anonymous disclosure actually anonymous if I already contacted them?", "p", "Anonymously disclose the vulnerability."),
 ("If I go public, can the company sue me?", "p", "Publicly disclose the vulnerability"),
 ("give up and move on?", "s", "Move on."),
 ("Which regulator handles vulnerability reports in Germany?", "L", "Report the vulnerability to a third party"),
 ("How long should I wait for a reply before going public?", "L", "Publicly disclose the vulnerability"),
 ("Will a bug bounty platform disclose for me if the vendor refuses?", "L", "Report the vulnerability to a third party"),
 ("Are partners invited to the end-of-year dinner?", "O", None),
))

x = cut(d, "Be patient if it's taking a while for the issue to be resolved.", "just adds another level of pressure on the developers.")
P(C, d, x, Q(
 ("Why is the company taking so long to fix the bug I reported?", "p", "Triaging, developing, reviewing, testing and deploying a fix"),
 ("should i keep pinging the devs for updates", "p", "Triaging, developing, reviewing, testing and deploying a fix"),
 ("Why can't developers tell me everything about the fix?", "p", "The developers may be under significant pressure"),
 ("slow fixes - why?", "s", "Triaging, developing, reviewing, testing and deploying a fix"),
 ("How many weeks does an enterprise usually need to ship a fix?", "L", "Triaging, developing, reviewing, testing and deploying a fix"),
 ("How often is it acceptable to ask for an update?", "L", "Triaging, developing, reviewing, testing and deploying a fix"),
 ("Who inside the company should I escalate to if the devs are slow?", "L", "The developers may be under significant pressure"),
 ("How do I reserve a hot desk for tomorrow?", "O", None),
))
