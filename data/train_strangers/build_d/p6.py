from lib import *
K = dict(p="paraphrase", s="short", t="typo", T="table", L="lookalike", O="offtopic")
def Q(*items): return [(q, K[k], a) for q, k, a in items]
C = "owasp-cheatsheets"

d = "REST_Security_Cheat_Sheet.md"
x = table(d, "| Code | Message", ["200", "201", "202", "301", "304", "307"])
P(C, d, x, Q(
 ("Which status code means the request was taken but isn't finished processing yet?", "T", "Code: 202"),
 ("when the api creates a new record, where is the link to it returned", "T", "Code: 201"),
 ("What code do we send when a page has moved for good?", "T", "Code: 301"),
 ("What does a 304 response mean?", "T", "Code: 304"),
 ("307 meaning", "s", "Code: 307"),
 ("Can a 200 OK be returned for a DELETE call?", "T", "Code: 200"),
 ("What does status code 308 Permanent Redirect mean?", "L", "Code: 301"),
 ("What status code should an API return for a successful request with no content?", "L", "Code: 200"),
 ("How long should a client cache a 304 response?", "L", "Code: 304"),
 ("Where can I find the IT service desk phone number?", "O", None),
))

x = table(d, "| Code | Message", ["400", "401", "403", "404", "405", "406"])
P(C, d, x, Q(
 ("Logged in fine but not allowed to see the resource - which error code?", "T", "Code: 403"),
 ("which code for a wrong password on the api", "T", "Code: 401"),
 ("The API expects GET but the client sent PUT. What status do we return?", "T", "Code: 405"),
 ("What error for a badly formatted request body?", "T", "Code: 400"),
 ("406 meaning?", "s", "Code: 406"),
 ("wich status code when the resorce doesnt exist", "t", "Code: 404"),
 ("Which status code means the resource existed but was permanently deleted?", "L", "Code: 404"),
 ("Which code tells the client that payment is required?", "L", "Code: 401"),
 ("Which status should we return for a request conflict, like a duplicate username?", "L", "Code: 400"),
 ("What's the process for getting a new employee badge?", "O", None),
))

x = table(d, "| Code | Message", ["413", "415", "429", "500", "501", "503"])
P(C, d, x, Q(
 ("User uploads a file over our size limit - which status code?", "T", "Code: 413"),
 ("What do we return when a client is being rate limited?", "T", "Code: 429"),
 ("Should a 500 error page show the stack trace?", "T", "Code: 500"),
 ("The service is down for maintenance - which code tells clients to try again later?", "T", "Code: 503"),
 ("not implemented yet status code", "s", "Code: 501"),
 ("What does 415 mean?", "T", "Code: 415"),
 ("How many requests per minute trigger a 429?", "L", "Code: 429"),
 ("What code should an upstream gateway timeout return?", "L", "Code: 503"),
 ("How long should clients wait before retrying after a 503?", "L", "Code: 503"),
 ("Who do I ask about the team offsite budget?", "O", None),
))

x = cut(d, "Public REST services without access control run the risk of being farmed", "Do not rely exclusively on API keys to protect sensitive, critical or high-value resources.")
P(C, d, x, Q(
 ("What happens if our public API has no access control at all?", "p", "Public REST services without access control"),
 ("What do we do with a customer's API key if they break the terms of use?", "p", "Revoke the API key if the client violates"),
 ("are api keys enough to protect really sensitive data", "p", "Do not rely exclusively on API keys"),
 ("Do API keys help against DoS?", "p", "API keys can reduce the impact of denial-of-service attacks."),
 ("How do companies make money from APIs with keys?", "p", "They are also often used by organization to monetize APIs"),
 ("api key on every request?", "s", "Require API keys for every request"),
 ("How many requests per second does the basic access plan allow?", "L", "They are also often used by organization to monetize APIs"),
 ("How often should API keys expire?", "L", "Revoke the API key if the client violates"),
 ("Should internal APIs between our own services use API keys too?", "L", "Require API keys for every request"),
 ("How do I change my tax withholding?", "O", None),
))

x = cut(d, "RESTful web services should be careful to prevent leaking credentials.", "- In `GET` requests sensitive data should be transferred in an HTTP Header.")
P(C, d, x, Q(
 ("Can we pass the API key as a URL parameter?", "p", "Passwords, security tokens, and API keys should not appear in the URL"),
 ("where should a password go in a POST request", "p", "In `POST`/`PUT` requests sensitive data"),
 ("For a GET call, how do I send a token safely?", "p", "In `GET` requests sensitive data"),
 ("Why is a token in the URL bad?", "p", "Passwords, security tokens, and API keys should not appear in the URL"),
 ("secrets in urls?", "s", "Passwords, security tokens, and API keys should not appear in the URL"),
 ("Which HTTP header name should carry the API key?", "L", "In `GET` requests sensitive data"),
 ("Should sensitive fields in the request body also be encrypted at field level?", "L", "In `POST`/`PUT` requests sensitive data"),
 ("How long are web server access logs kept?", "L", "Passwords, security tokens, and API keys should not appear in the URL"),
 ("Where can I see my remaining training budget?", "O", None),
))

d = "Session_Management_Cheat_Sheet.md"
x = cut(d, "Different encoding methods can result in different lengths for the same amount of entropy.", "or increase the overall length if parts of the ID are not random.")
P(C, d, x, Q(
 ("How many hex characters does a session ID need?", "p", "When using hexadecimal encoding, a session ID must be"),
 ("if half the session id is fixed how much randomness is left", "p", "For example, if half of a 16-character hexadecimal session ID is fixed"),
 ("Is 32 bits of entropy enough for a session ID?", "p", "For example, if half of a 16-character hexadecimal session ID is fixed"),
 ("What should we do if part of the session ID isn't random?", "p", "To maintain security, ensure that the entire session ID"),
 ("session id length hex", "s", "When using hexadecimal encoding, a session ID must be"),
 ("how many charaters for a base64 session id", "L", "When using different encodings"),
 ("How long should a password reset token be in hex?", "L", "When using hexadecimal encoding, a session ID must be"),
 ("Which random number generator should produce the session ID?", "L", "To maintain security, ensure that the entire session ID"),
 ("What is the per-night hotel limit for business travel?", "O", None),
))

d = "Multifactor_Authentication_Cheat_Sheet.md"
x = cut(d, "- Requires the user to have a mobile device or landline.", "- SMS may be read by malicious or insecure applications.")
x = "#### Cons\n\n" + x
assert x in src(d)
P(C, d, x, Q(
 ("What are the drawbacks of texting login codes?", "p", "Requires the user to have a mobile device or landline."),
 ("can sms codes cost us money", "p", "Calls and SMS messages may cost money"),
 ("Is SMS 2FA vulnerable to SIM swaps?", "p", "Susceptible to SIM swapping attacks."),
 ("Can someone see the code on a locked phone?", "p", "SMS may be previewed when the device is locked."),
 ("sms codes phishable?", "s", "Susceptible to phishing."),
 ("How much does each SMS code cost to send?", "L", "Calls and SMS messages may cost money"),
 ("Are push notifications vulnerable to SIM swapping?", "L", "Susceptible to SIM swapping attacks."),
 ("Which mobile carriers block SIM swaps?", "L", "Susceptible to SIM swapping attacks."),
 ("How do I sign up for the company running club?", "O", None),
))

x = cut(d, "- Relies entirely on the security of the email account, which often lacks MFA.", "- Susceptible to phishing.\n\n## Something You Are")
x = x[: -len("\n\n## Something You Are")]
x = "#### Cons\n\n" + x
assert x in src(d)
P(C, d, x, Q(
 ("What's wrong with using email codes as a second factor?", "p", "Relies entirely on the security of the email account"),
 ("if someone already hacked the user's mailbox does email mfa help", "p", "Provides no protection if the user's email is compromised first."),
 ("Do people often reuse their app password for email?", "p", "Email passwords are commonly the same as application passwords."),
 ("email mfa phishing?", "s", "Susceptible to phishing."),
 ("How long should an emailed login code stay valid?", "L", "Relies entirely on the security of the email account"),
 ("Is a magic login link safer than an emailed code?", "L", "Relies entirely on the security of the email account"),
 ("Which email provider offers the best MFA?", "L", "Relies entirely on the security of the email account"),
 ("Where is the lost and found?", "O", None),
))

d = "File_Upload_Cheat_Sheet.md"
x = cut(d, "In short, the following principles should be followed to reach a secure file upload implementation:", "- **Ensure that any libraries used are securely configured and kept up to date**")
P(C, d, x, Q(
 ("Can we trust the Content-Type header to tell us the file type?", "p", "**Validate the file type"),
 ("should we keep the user's original filename", "p", "**Change the filename"),
 ("Where should uploaded files be stored?", "p", "**Store the files on a different server."),
 ("Should uploads be virus scanned?", "p", "**Run the file through an antivirus"),
 ("who should be allowed to upload files", "p", "**Only allow authorized users to upload files**"),
 ("file size limit?", "s", "**Set a file size limit**"),
 ("What is the maximum upload size in megabytes?", "L", "**Set a file size limit**"),
 ("Which file extensions are on the allowed list?", "L", "**List allowed extensions."),
 ("Which antivirus product should scan uploads?", "L", "**Run the file through an antivirus"),
 ("How many characters can a filename have?", "L", "**Set a filename length limit."),
 ("Who approves overtime pay?", "O", None),
))

x = cut(d, "The application should set proper size limits for the upload service", "to protect the server from DoS attacks.")
P(C, d, x, Q(
 ("Why cap the size of uploads?", "p", "The application should set proper size limits"),
 ("for zip files is the size limit checked before or after unzipping", "p", "If the system is going to extract the files"),
 ("Do downloads need limits too?", "p", "The application should set proper request limits"),
 ("zip size check timing?", "s", "If the system is going to extract the files"),
 ("What is the download rate limit per user per hour?", "L", "The application should set proper request limits"),
 ("How many files can be uploaded at once?", "L", "The application should set proper size limits"),
 ("How much total storage does each user get for uploads?", "L", "The application should set proper size limits"),
 ("Where are internal vacancies advertised?", "O", None),
))
