from lib import *
K = dict(p="paraphrase", s="short", t="typo", T="table", L="lookalike", O="offtopic")
def Q(*items): return [(q, K[k], a) for q, k, a in items]
C = "owasp-cheatsheets"

d = "Authentication_Cheat_Sheet.md"
x = cut(d, "A key concern when using passwords for authentication is password strength.", "Avoid advertising a bits-of-entropy figure to users as a guarantee of strength.")
P(C, d, x, Q(
 ("If we have two-factor turned on, how short is too short for a password?", "p", "If MFA is enabled passwords"),
 ("without mfa what's the minimum password length", "p", "If MFA is not enabled passwords"),
 ("Should we cap passwords at 20 characters?", "p", "**Maximum** password length should be"),
 ("Can we show users how many bits of entropy their password has as proof it's strong?", "p", "Avoid advertising a bits-of-entropy figure"),
 ("min pasword length no 2fa", "t", "If MFA is not enabled passwords"),
 ("longest allowed password?", "s", "**Maximum** password length should be"),
 ("What is the minimum PIN length for unlocking company phones?", "L", "If MFA is enabled passwords"),
 ("What minimum length applies to MFA recovery codes?", "L", "If MFA is not enabled passwords"),
 ("Which password manager does the company provide for long passphrases?", "L", "**Maximum** password length should be"),
 ("How do I enroll in the employee stock purchase plan?", "O", None),
))

x = cut(d, "- Allow usage of **all** characters including unicode and whitespace.", "verifiers should not mandate arbitrary password changes (e.g., periodically).")
P(C, d, x, Q(
 ("Do we have to force people to include a number or a symbol in their password?", "p", "There should be no requirement for upper or lower case"),
 ("Can a password contain spaces or emoji?", "p", "Allow usage of **all** characters"),
 ("Should we make everyone change their password every 90 days?", "p", "Avoid requiring periodic password changes"),
 ("When do passwords actually need to be rotated?", "p", "Ensure credential rotation when a password leak occurs"),
 ("forced password expiry?", "s", "Avoid requiring periodic password changes"),
 ("do we need special charcters in passwords", "t", "There should be no requirement for upper or lower case"),
 ("How many previous passwords should the system remember to stop reuse?", "L", "Ensure credential rotation when a password leak occurs"),
 ("Should Wi-Fi pre-shared keys be changed every quarter?", "L", "Avoid requiring periodic password changes"),
 ("Which characters are banned in usernames?", "L", "Allow usage of **all** characters"),
))

x = cut(d, "- Block common and previously breached passwords", "hosted by SecLists from Daniel Miessler.")
P(C, d, x, Q(
 ("how can we check if a new password has shown up in a data breach", "p", "[Pwned Passwords](https://haveibeenpwned.com/Passwords) is a service"),
 ("Can we host the breached-password list on our own servers instead of calling an API?", "p", "Alternatively, you can download"),
 ("Are the other common-password lists kept up to date?", "p", "Other top password lists are available"),
 ("breached password check service?", "s", "[Pwned Passwords](https://haveibeenpwned.com/Passwords) is a service"),
 ("How often is the Pwned Passwords database refreshed?", "L", "[Pwned Passwords](https://haveibeenpwned.com/Passwords) is a service"),
 ("What does an API key for the breached-password service cost per month?", "L", "Details on the API"),
 ("Should we block passwords that contain the company name?", "L", "Block common and previously breached passwords"),
 ("When are annual performance reviews due?", "O", None),
))

x = cut(d, "Where possible, the user-supplied password should be compared", "Returns in constant time, to protect against timing attacks.")
P(C, d, x, Q(
 ("In PHP, what should I use to check a login password against the stored hash?", "p", "Where possible, the user-supplied password should be compared"),
 ("why should a homemade compare function run in constant time", "p", "Returns in constant time"),
 ("Does the comparison function need a limit on how long the input can be?", "p", "Has a maximum input length"),
 ("How do we avoid magic hash type-juggling issues when comparing?", "p", "Explicitly sets the type of both variables"),
 ("What is the built-in password verification function in Java?", "L", "Where possible, the user-supplied password should be compared"),
 ("What maximum input length should the comparison function enforce?", "L", "Has a maximum input length"),
 ("How long should the login page wait after a failed comparison?", "L", "Returns in constant time"),
 ("Who signs off on purchase orders above 5,000 euros?", "O", None),
 ("Is there a shuttle bus from the train station to the office?", "O", None),
))

x = cut(d, "The most common protection against these attacks is to implement account lockout", "How long the account is locked out for (lockout duration).")
P(C, d, x, Q(
 ("Should failed login counts be tracked per IP address or per user account?", "p", "The counter of failed logins should be associated with the account itself"),
 ("What is a lockout threshold?", "p", "The number of failed attempts before the account is locked out"),
 ("what's the term for the time span in which failed logins are counted", "p", "The time period that these attempts must occur within"),
 ("how does account lockout stop password guessing", "p", "The most common protection against these attacks"),
 ("lockout duration meaning", "s", "How long the account is locked out for"),
 ("How many failed attempts before an account gets locked?", "L", "The number of failed attempts before the account is locked out"),
 ("How long is an account locked for after too many failed logins?", "L", "How long the account is locked out for"),
 ("Who can unlock a locked-out account for me?", "L", "The most common protection against these attacks"),
 ("Can I expense a home office chair?", "O", None),
))

x = cut(d, "Rather than implementing a fixed lockout duration (e.g., ten minutes)", "even if the account is locked out.")
P(C, d, x, Q(
 ("What's an exponential lockout?", "p", "Rather than implementing a fixed lockout duration"),
 ("could attackers use lockouts to block other people out on purpose", "p", "When designing an account lockout system"),
 ("If my account is locked, can I still get in through forgot password?", "p", "One way this could be performed"),
 ("How many lockout delays before the account is locked permanently?", "p", "Amount of time to delay after each account lockout"),
 ("exponential lockout starting delay?", "s", "Rather than implementing a fixed lockout duration"),
 ("Does the exponential delay reset after a successful login?", "L", "Rather than implementing a fixed lockout duration"),
 ("Who has to approve lifting a permanent account lockout?", "L", "Amount of time to delay after each account lockout"),
 ("Does a password reset also clear the failed-login counter?", "L", "One way this could be performed"),
 ("What is the per diem for business trips to London?", "O", None),
))

x = cut(d, "The use of an effective CAPTCHA can help to prevent automated login attempts", "rather than requiring it from the very first login.")
P(C, d, x, Q(
 ("Is a CAPTCHA enough on its own to stop bots guessing passwords?", "p", "As such, the use of CAPTCHA should be viewed"),
 ("Do we have to show a captcha on every login?", "p", "It may be more user-friendly"),
 ("can captchas be beaten", "p", "However, many CAPTCHA implementations have weaknesses"),
 ("captcha every login?", "s", "It may be more user-friendly"),
 ("Which CAPTCHA vendor should we use on the login page?", "L", "The use of an effective CAPTCHA"),
 ("After exactly how many failed attempts should the CAPTCHA appear?", "L", "It may be more user-friendly"),
 ("Are CAPTCHAs accessible to blind users?", "L", "The use of an effective CAPTCHA"),
 ("Where can I find the org chart?", "O", None),
))

x = table(d, "| Attack Type", ["Brute Force", "Credential Stuffing", "Password Spraying"])
P(C, d, x, Q(
 ("What do you call it when attackers try one weak password against loads of accounts?", "T", "Attack Type: Password Spraying"),
 ("someone is using username/password pairs leaked from another website - what is that attack", "T", "Attack Type: Credential Stuffing"),
 ("What is a brute force attack on a login?", "T", "Attack Type: Brute Force"),
 ("credential stuffing meaning", "s", "Attack Type: Credential Stuffing"),
 ("passwrd spraying definition", "t", "Attack Type: Password Spraying"),
 ("What is a phishing attack on a login page?", "L", "Attack Type: Credential Stuffing"),
 ("How common is password spraying compared with brute force?", "L", "Attack Type: Password Spraying"),
 ("What is an MFA fatigue attack?", "L", "Attack Type: Brute Force"),
 ("Where do I update my home address in the HR system?", "O", None),
 ("What's the guest Wi-Fi password at reception?", "O", None),
))
