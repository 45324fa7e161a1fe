from lib import *
K = dict(p="paraphrase", s="short", t="typo", T="table", L="lookalike", O="offtopic")
def Q(*items): return [(q, K[k], a) for q, k, a in items]
C = "owasp-cheatsheets"

d = "Logging_Cheat_Sheet.md"
x = cut(d, "Applications commonly write event log data to the file system or a database", "for management by the execution environment.")
P(C, d, x, Q(
 ("Where do apps normally keep their logs?", "p", "Applications commonly write event log data"),
 ("can our app ship its logs to a remote system rather than keeping them locally", "p", "All types of applications may send event data to remote systems"),
 ("Is it fine for a service to just write its log stream to standard output?", "p", "Consider whether the application can simply send its event stream"),
 ("What's an example of a central log collection system?", "p", "This could be a centralized log collection and management system"),
 ("logs to stdout ok?", "s", "Consider whether the application can simply send its event stream"),
 ("Which SIEM product does the company use?", "L", "This could be a centralized log collection and management system"),
 ("How much local disk space should be reserved for logs on mobile devices?", "L", "Applications installed on desktops and on mobile devices"),
 ("Should logs be sent to the remote system in real time or in hourly batches?", "L", "All types of applications may send event data to remote systems"),
 ("How do I claim mileage for using my own car?", "O", None),
))

x = cut(d, "- When using the file system, it is preferable to use a separate partition", "standard formats facilitate integration with centralised logging services")
P(C, d, x, Q(
 ("Should log files live on the same disk partition as the operating system?", "p", "When using the file system, it is preferable"),
 ("our web app logs are in a public folder, is that ok", "p", "In web applications, the logs should not be exposed"),
 ("What kind of database account should write the logs?", "p", "When using a database, it is preferable to utilize a separate database account"),
 ("What log formats should we use to send events to other systems?", "p", "Use standard formats over secure protocols"),
 ("MIME type for web-served logs?", "s", "In web applications, the logs should not be exposed"),
 ("who may read the log directories", "p", "For file-based logs, apply strict permissions"),
 ("How big can a log partition get before it must be rotated?", "L", "When using the file system, it is preferable"),
 ("Which port should syslog use to reach the central log server?", "L", "Use standard formats over secure protocols"),
 ("Can developers query the log database with their own accounts?", "L", "When using a database, it is preferable to utilize a separate database account"),
 ("What's the notice period if I want to resign?", "O", None),
))

x = cut(d, "Where possible, always log:", "logging initialization (starting, stopping or pausing)")
P(C, d, x, Q(
 ("do we log successful logins or only failed ones", "p", "Authentication successes and failures"),
 ("Should access-denied errors be written to the log?", "p", "Authorization (access control) failures"),
 ("If someone tampers with their session cookie, is that a loggable event?", "p", "Session management failures"),
 ("Why is a wrong value from a dropdown list treated as serious?", "p", "A specific event for failures to validate a value"),
 ("log app startup and shutdown?", "s", "Application and related systems start-ups"),
 ("shoud we log virus hits on file uploads", "t", "Application errors and system events"),
 ("How long should failed login events be kept?", "L", "Authentication successes and failures"),
 ("Should successful authorization checks be logged too?", "L", "Authorization (access control) failures"),
 ("Which log level should input validation failures use?", "L", "Input validation failures"),
 ("What are the office opening hours on public holidays?", "O", None),
))

x = cut(d, "- Use of higher-risk functionality including:", "requests with an unexpected HTTP verb")
P(C, d, x, Q(
 ("Should we log when an admin adds or removes a user?", "p", "User administration actions"),
 ("is using the break-glass account something we need to record", "p", "Use of default or shared accounts"),
 ("Do exports of data, including screen reports, count as high-risk actions to log?", "p", "Data import and export"),
 ("what about key rotation, does it get logged", "p", "Encryption activities"),
 ("log certificate validation failures?", "s", "Network connections and associated failures"),
 ("Should we log every read of an ordinary customer's profile page?", "L", "Access to sensitive data"),
 ("How long must break-glass account logs be retained?", "L", "Use of default or shared accounts"),
 ("Who reviews the logs of administrator actions each week?", "L", "Use of systems administrative privileges"),
 ("Can I work remotely from another country for a month?", "O", None),
))

x = cut(d, "The following should usually not be recorded directly in the logs", "or where consent to collect has expired")
P(C, d, x, Q(
 ("Can we write database connection strings to the log?", "p", "Database connection strings"),
 ("I need to track a session across log lines - can I log the session ID?", "p", "Session identification values"),
 ("is it ok to log card numbers", "p", "Bank account or payment card holder data"),
 ("What do we do with sensitive data instead of logging it directly?", "p", "The following should usually not be recorded"),
 ("passwords in logs?", "s", "Authentication passwords"),
 ("user opted out of tracking - can we still log their data", "p", "Information a user has opted out of collection"),
 ("acess tokens in logs allowed", "t", "Access tokens"),
 ("How long can we keep masked card numbers in the logs?", "L", "Sensitive personal data"),
 ("Which hashing algorithm should we use to mask session IDs in logs?", "L", "Session identification values"),
 ("Which masking format should we use for card numbers in logs?", "L", "Bank account or payment card holder data"),
 ("How do I reset my voicemail PIN?", "O", None),
))

x = cut(d, "The logged event data needs to be available to review", "centralized intelligence gathering/sharing systems")
P(C, d, x, Q(
 ("Should our app's logs go into the company's central logging platform?", "p", "Incorporate the application logging"),
 ("when should teams be alerted about serious events", "p", "Enable alerting and signal the responsible teams"),
 ("Can we share log events with partner organisations?", "p", "Share relevant event information"),
 ("serious events alerting?", "s", "Enable alerting and signal the responsible teams"),
 ("Which team is on call for log alerts at weekends?", "L", "Enable alerting and signal the responsible teams"),
 ("Which alerting tool should we connect the logs to?", "L", "Enable alerting and signal the responsible teams"),
 ("How often must someone manually review the logs?", "L", "The logged event data needs to be available to review"),
 ("Is there a discount for employees at the gym next door?", "O", None),
))

x = cut(d, "Log data, temporary debug logs, and backups/copies/extractions", "Legal, regulatory and contractual obligations may impact on these periods.")
P(C, d, x, Q(
 ("Can we delete logs early to save disk space?", "p", "Log data, temporary debug logs"),
 ("can we keep debug logs forever just in case", "p", "Log data, temporary debug logs"),
 ("What decides how long logs must be kept?", "p", "Legal, regulatory and contractual obligations"),
 ("log retention rules?", "s", "Log data, temporary debug logs"),
 ("How many days are application logs retained?", "L", "Log data, temporary debug logs"),
 ("How should logs be securely wiped once the retention period ends?", "L", "Log data, temporary debug logs"),
 ("Who sets the retention period for customer emails?", "L", "Legal, regulatory and contractual obligations"),
 ("How do I nominate a colleague for the quarterly award?", "O", None),
 ("Where do I park my car at headquarters?", "O", None),
))

x = cut(d, "Never log data unless it is legally sanctioned.", "without consent may all be illegal.")
P(C, d, x, Q(
 ("Are we allowed to log whatever we want about employees?", "p", "For example, intercepting some communications"),
 ("when can we record data in logs", "p", "Never log data unless it is legally sanctioned."),
 ("collecting data without consent in logs ok?", "s", "For example, intercepting some communications"),
 ("Which country's privacy law applies to our logs?", "L", "Never log data unless it is legally sanctioned."),
 ("Who in Legal signs off on employee monitoring?", "L", "For example, intercepting some communications"),
 ("What fine do we face if we log data illegally?", "L", "For example, intercepting some communications"),
 ("How do I get a parking permit for a visitor?", "O", None),
))

d = "Secrets_Management_Cheat_Sheet.md"
x = cut(d, "Therefore, it is better to limit or remove the human interaction with the actual secrets.", "sufficiently supported by IT.")
P(C, d, x, Q(
 ("How can we keep people from handling secrets directly?", "p", "Therefore, it is better to limit"),
 ("What are dynamic secrets?", "p", "**Using dynamic secrets:**"),
 ("if an app's db password is stolen what happens after the app restarts with dynamic secrets", "p", "**Using dynamic secrets:**"),
 ("Should key rotation be done by hand?", "p", "**Automated rotation of static secrets:**"),
 ("secrets pipeline?", "s", "**Secrets pipeline:**"),
 ("How often should static API keys be rotated?", "L", "**Automated rotation of static secrets:**"),
 ("Which vault product should hold the dynamic secrets?", "L", "**Using dynamic secrets:**"),
 ("Who in IT owns the secrets pipeline?", "L", "**Secrets pipeline:**"),
 ("What's the process for returning a company laptop when I leave?", "O", None),
))

x = cut(d, "Rotating certain keys, such as encryption keys, might trigger", "- and more...")
P(C, d, x, Q(
 ("Will rotating our encryption key mean re-encrypting the data?", "p", "Rotating certain keys, such as encryption keys"),
 ("what are some strategies for rotating keys", "p", "Different strategies for rotating keys exist"),
 ("During a gradual rotation, which keys are used for reads?", "p", "Leaving old keys for Read operations"),
 ("new keys for writes?", "s", "Introducing new keys for Write operations"),
 ("How often should scheduled rotation happen?", "L", "Scheduled rotation"),
 ("How long do old keys stay around for reads before deletion?", "L", "Leaving old keys for Read operations"),
 ("Does rotating TLS certificates require re-encrypting stored data?", "L", "Rotating certain keys, such as encryption keys"),
 ("How many days' notice do I need to give for annual leave?", "O", None),
))
