from lib import *
K = dict(p="paraphrase", s="short", t="typo", T="table", L="lookalike", O="offtopic")
def Q(*items): return [(q, K[k], a) for q, k, a in items]
C = "owasp-cheatsheets"

d = "Forgot_Password_Cheat_Sheet.md"
x = cut(d, "When a user uses the forgot password service and inputs their username or email", "[Input Validation](Input_Validation_Cheat_Sheet.md).")
P(C, d, x, Q(
 ("Should the reset page tell people when an email address isn't registered?", "p", "Return a consistent message"),
 ("why does response time matter on the forgot password page", "p", "Ensure that responses return in a consistent amount of time"),
 ("How do we stop someone from spamming a user's inbox with reset emails?", "p", "Implement protections against excessive automated submissions"),
 ("reset request rate limiting?", "s", "Implement protections against excessive automated submissions"),
 ("What happens if the reset form has no limit on requests?", "p", "Otherwise an attacker could make thousands"),
 ("How many reset requests per hour should one account be allowed?", "L", "Implement protections against excessive automated submissions"),
 ("What wording should the reset confirmation message use?", "L", "Return a consistent message"),
 ("Should the forgot username page also return the same message for unknown emails?", "L", "Return a consistent message"),
 ("How do I report a broken coffee machine?", "O", None),
))

x = cut(d, "Once the user has proved their identity by providing the token", "or invalidate the sessions automatically.")
P(C, d, x, Q(
 ("After someone resets their password, do we log them straight in?", "p", "Once they have set their new password"),
 ("Can we email users their new password after a reset?", "p", "Send the user an email informing them"),
 ("Should people type the new password twice?", "p", "The user should confirm the password"),
 ("what about other logged in sessions after a password reset", "p", "Ask the user if they want to invalidate"),
 ("auto login after reset?", "s", "Once they have set their new password"),
 ("shoud we notify users when there password is reset", "t", "Send the user an email informing them"),
 ("Should we text the user when their password has been changed from the settings page?", "L", "Send the user an email informing them"),
 ("How long is a reset code sent by SMS valid for?", "L", "Once the user has proved their identity"),
 ("Can the new password be the same as the old one?", "L", "Ensure that a secure password policy is in place"),
 ("When is the deadline for submitting timesheets?", "O", None),
))

x = cut(d, "It is essential to employ good security practices for the reset identifiers", "- Stored in a secure manner, as discussed in the [Password Storage Cheat Sheet](Password_Storage_Cheat_Sheet.md).")
P(C, d, x, Q(
 ("Can a password reset link be used more than once?", "p", "Invalidated after they have been used."),
 ("how should reset tokens be generated", "p", "Generated using a [cryptographically secure random number generator]"),
 ("Is it ok to use a JWT as the reset token?", "p", "It is also possible to use JSON Web Tokens"),
 ("Can we keep reset codes in the database in plain text?", "p", "Stored in a secure manner"),
 ("reset token reuse?", "s", "Invalidated after they have been used."),
 ("How many characters long must a reset token be?", "L", "Long enough to protect against brute-force attacks."),
 ("How many minutes before an emailed reset token expires?", "L", "Some points don't apply to the [offline methods](#offline-methods)"),
 ("Can one reset token be shared by all users in a team account?", "L", "Linked to an individual user in the database."),
 ("How do I request access to the finance shared drive?", "O", None),
))

x = cut(d, "URL tokens are passed in the query string of the URL", "Ensure that the same password policy used elsewhere in the application is applied.")
P(C, d, x, Q(
 ("Should the password reset link be http or https?", "p", "Ensure that the URL is using HTTPS."),
 ("How does the reset link usually get to the user?", "p", "URL tokens are passed in the query string"),
 ("is it ok to build the reset URL from the Host header", "p", "Don't rely on the [Host]"),
 ("How do we stop people guessing tokens in the reset link?", "p", "Implement appropriate protection to prevent users from brute-forcing"),
 ("referrer policy on reset page?", "s", "Ensure that the reset password page adds the"),
 ("Which email provider should send the reset links?", "L", "Send this token to the user via email."),
 ("How many security questions must the user answer in step 4?", "L", "If required, perform any additional validation steps"),
 ("Should the reset link also be sent by text message?", "L", "Send this token to the user via email."),
 ("Who do I talk to about switching to part-time hours?", "O", None),
 ("What time does the canteen close?", "O", None),
))

x = cut(d, "PINs are numbers (between 6 and 12 digits)", "Ensure that the same password policy used elsewhere in the application is applied.")
P(C, d, x, Q(
 ("How many digits does a reset PIN have?", "p", "PINs are numbers (between 6 and 12 digits)"),
 ("how is the pin delivered to the user", "p", "Send it to the user via SMS or another mechanism."),
 ("What can the user do with the session created from the PIN?", "p", "Create a limited session from that PIN"),
 ("Why put spaces in the PIN?", "p", "Breaking the PIN up with spaces"),
 ("reset pin length", "s", "PINs are numbers (between 6 and 12 digits)"),
 ("Where does the user type in the PIN?", "p", "The user then enters the PIN"),
 ("How many digits long is the PIN for the office door keypad?", "L", "PINs are numbers (between 6 and 12 digits)"),
 ("How many wrong PIN entries are allowed before it is cancelled?", "L", "The user then enters the PIN"),
 ("How long does the limited PIN session stay open?", "L", "Create a limited session from that PIN"),
 ("How do I add my partner to my health insurance?", "O", None),
))

d = "Multifactor_Authentication_Cheat_Sheet.md"
x = cut(d, "The most important place to require MFA on an application is when the user logs in.", "or has an associated mobile application.")
P(C, d, x, Q(
 ("Besides logging in, when should we ask for the second factor again?", "p", "However, depending on the functionality available"),
 ("does switching off mfa itself need mfa", "p", "Disabling MFA."),
 ("If someone changes the email on their account, should we ask for MFA?", "p", "Changing the email address associated with the account."),
 ("Our mobile app logs in through a separate API - does that need MFA too?", "p", "If the application provides multiple ways"),
 ("mfa for admin elevation?", "s", "Elevating a user session to an administrative session."),
 ("Do we need MFA when someone changes their shipping address?", "L", "Changing the email address associated with the account."),
 ("How often should MFA be required again during a long session?", "L", "The most important place to require MFA"),
 ("Which authenticator app should the mobile application use?", "L", "If the application provides multiple ways"),
 ("Where are the first-aid kits kept?", "O", None),
))

x = cut(d, "When a user enters their password, but fails to authenticate using a second factor", "optionally emailed to them as well.")
P(C, d, x, Q(
 ("What could it mean if the password was right but the second factor failed?", "p", "When a user enters their password, but fails"),
 ("what details should the failed-login alert include", "p", "The notification should include the time"),
 ("Should we tell a user about a login that got their password right but failed MFA?", "p", "Notify the user of the failed login attempt"),
 ("What should we offer if their phone has no signal?", "p", "Prompt the user to try another form of MFA."),
 ("failed 2fa what next", "s", "Prompt the user to try another form of MFA."),
 ("How many failed MFA attempts before the account is locked?", "L", "There are a number of steps that should be taken"),
 ("Should the failed-login alert include the attacker's IP address and device model?", "L", "The notification should include the time"),
 ("Should we alert the security team when the second factor fails?", "L", "Notify the user of the failed login attempt"),
 ("When is payday this month?", "O", None),
))

x = cut(d, "One of the biggest challenges with implementing MFA is handling users", "Requiring another trusted user to vouch for them.")
P(C, d, x, Q(
 ("I wiped my phone and lost my authenticator codes - what are the ways to recover?", "p", "Some suggestions of possible methods include:"),
 ("Should we hand out backup codes when people first set up two-factor?", "p", "Providing the user with a number of single-use recovery codes"),
 ("can a colleague vouch for me to reset my mfa", "p", "Requiring another trusted user to vouch for them."),
 ("Is there one best way to do MFA recovery?", "p", "There is no definitive \"best way\""),
 ("mfa recovery by post?", "s", "Mailing a one-use recovery code"),
 ("How many recovery codes should each user get?", "L", "Providing the user with a number of single-use recovery codes"),
 ("What ID documents does the support team ask for before resetting MFA?", "L", "Requiring the user contact the support team"),
 ("How long are mailed recovery codes valid?", "L", "Mailing a one-use recovery code"),
 ("Do we have a bike-to-work scheme?", "O", None),
 ("How do I get reimbursed for a train ticket?", "O", None),
))

x = cut(d, "Users may need to update their authentication factors", "Consider applying delays or step-up verification for high-value accounts.")
P(C, d, x, Q(
 ("I got a new phone - what should happen before I can move my authenticator?", "p", "Require reauthentication with an existing enrolled factor"),
 ("Is being logged in enough to swap out an MFA device?", "p", "Do not rely solely on the active session"),
 ("how should users be told when their 2fa method changes", "p", "Notify the user through out-of-band channels"),
 ("Should VIP accounts get extra checks before changing factors?", "p", "Consider applying delays or step-up verification"),
 ("mfa change notification?", "s", "Notify the user through out-of-band channels"),
 ("How long should the delay be before a new MFA factor takes effect?", "L", "Consider applying delays or step-up verification"),
 ("Who in IT approves a replacement hardware token?", "L", "Users may need to update their authentication factors"),
 ("Should we notify the user's manager when their MFA factor changes?", "L", "Notify the user through out-of-band channels"),
 ("What is the company's policy on bringing pets to the office?", "O", None),
))

x = table(d, "| Factor", ["[Something You Know](#something-you-know)", "[Something You Have](#something-you-have)", "[Something You Are](#something-you-are)", "[Somewhere You Are](#somewhere-you-are)", "[Something You Do](#something-you-do)"])
P(C, d, x, Q(
 ("Which MFA factor type do smart cards belong to?", "T", "Factor: [Something You Have]"),
 ("is geofencing a location-based factor", "T", "Factor: [Somewhere You Are]"),
 ("What counts as a 'something you are' factor?", "T", "Factor: [Something You Are]"),
 ("Are security questions a knowledge factor?", "T", "Factor: [Something You Know]"),
 ("keystroke dynamics factor type", "s", "Factor: [Something You Do]"),
 ("Is SMS the weakest of the 'something you have' factors?", "L", "Factor: [Something You Have]"),
 ("Which factor type is considered the strongest?", "L", "Factor: [Something You Are]"),
 ("Which factor is 'someone you know', like a colleague vouching?", "L", "Factor: [Something You Know]"),
 ("How do I order business cards?", "O", None),
))
