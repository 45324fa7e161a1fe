from lib import *
K = dict(p="paraphrase", s="short", t="typo", T="table", L="lookalike", O="offtopic")
def Q(*items): return [(q, K[k], a) for q, k, a in items]
C = "owasp-cheatsheets"

d = "Password_Storage_Cheat_Sheet.md"
x = cut(d, "Rather than a simple work factor like other algorithms", "the only difference is a trade off between CPU and RAM usage.")
P(C, d, x, Q(
 ("how much memory should argon2id use if I only want one pass", "p", "- m=47104"),
 ("We can spare only about 12 MB of RAM per login hash. How many iterations do we need?", "p", "- m=12288"),
 ("Are the different Argon2id memory/iteration combos equally secure?", "p", "These configuration settings provide an equal level"),
 ("argon2id 19 MiB setting - iterations?", "s", "- m=19456"),
 ("wich argon2id settings shouldnt be used with argon2i", "t", "- m=47104"),
 ("What do the three Argon2id knobs stand for?", "p", "Rather than a simple work factor"),
 ("What salt length should we use with Argon2id?", "L", "Rather than a simple work factor"),
 ("How long should one Argon2id hash take to compute on our login server?", "L", "These parameters control how computationally expensive"),
 ("With 9 MiB of memory, what parallelism value do we use for Argon2d?", "L", "- m=9216"),
 ("Who approves changes to the company's travel policy?", "O", None),
))

x = cut(d, "Like [Argon2id](#argon2id), scrypt has three parameters", "the main trade-off between parallelism and RAM usage.")
P(C, d, x, Q(
 ("If we hash passwords with scrypt and give it 64 MiB, what should p be?", "p", "- N=2^16"),
 ("What block size does scrypt use in all the recommended settings?", "p", "- N=2^17"),
 ("scrypt settings for a box with little RAM", "p", "- N=2^13"),
 ("What are we trading off when picking between the scrypt options?", "p", "These configuration settings provide a similar"),
 ("scrypt 32 MiB parallelism?", "s", "- N=2^15"),
 ("What is the recommended scrypt salt size?", "L", "Like [Argon2id](#argon2id), scrypt has three"),
 ("What value of N should we use with 256 MiB of memory for scrypt?", "L", "- N=2^17"),
 ("How much slower is scrypt than Argon2id with these settings?", "L", "These configuration settings provide a similar"),
))

x = cut(d, "The [bcrypt](https://en.wikipedia.org/wiki/bcrypt) password hashing function", "has smaller limits).")
P(C, d, x, Q(
 ("When is it okay to still use bcrypt?", "p", "The [bcrypt](https://en.wikipedia.org/wiki/bcrypt) password hashing function"),
 ("What's the lowest bcrypt cost factor we should set?", "p", "The work factor should be as large"),
 ("how long can a password be if we hash it with bcrypt", "p", "bcrypt has a maximum length input length"),
 ("bcrypt max password length?", "s", "bcrypt has a maximum length input length"),
 ("minimum bcrypt work factr", "t", "The work factor should be as large"),
 ("How many milliseconds does one bcrypt hash take at cost 10?", "L", "The work factor should be as large"),
 ("What's the minimum password length when passwords are stored with bcrypt?", "L", "bcrypt has a maximum length input length"),
 ("How do we pre-hash passwords so bcrypt can take ones longer than its limit?", "L", "The [bcrypt](https://en.wikipedia.org/wiki/bcrypt) password hashing function"),
 ("How many vacation days roll over if I don't use them?", "O", None),
 ("How do I book a meeting room for more than ten people?", "O", None),
))

d = "Session_Management_Cheat_Sheet.md"
x = cut(d, "Both the idle and absolute timeout values are highly dependent", "The latter is the most relevant and mandatory from a security perspective.")
P(C, d, x, Q(
 ("How quickly should an inactive session time out on a banking-type app?", "p", "Common idle timeouts ranges"),
 ("our internal tool is low risk - how many minutes of inactivity before logout", "p", "Common idle timeouts ranges"),
 ("For staff who use the app all day, what's a sensible hard limit on session length?", "p", "If the application is intended to be used by an office worker"),
 ("When a session ends, does it have to be killed on the server as well as in the browser?", "p", "When a session expires, the web application must take"),
 ("idle timeout high value apps", "s", "Common idle timeouts ranges"),
 ("absolute timout for full day office use", "t", "If the application is intended to be used by an office worker"),
 ("What's the recommended idle timeout for a mobile banking app that uses biometrics?", "L", "Common idle timeouts ranges"),
 ("What absolute session limit should we set for contractors who only log in for an hour a week?", "L", "If the application is intended to be used by an office worker"),
 ("How many concurrent sessions may one user have on a high-value application?", "L", "Both the idle and absolute timeout values"),
 ("Where do I submit receipts for a client lunch?", "O", None),
))

x = cut(d, "All sessions should implement an idle or inactivity timeout.", "an attacker could manipulate these to extend the session duration.")
P(C, d, x, Q(
 ("From what moment is the inactivity timer counted?", "p", "This timeout defines the amount of time a session will remain active"),
 ("Does an inactivity timeout stop someone who has already hijacked a session?", "p", "However, if the attacker is able to hijack"),
 ("can the browser be in charge of enforcing the session timeout", "p", "Session timeout management and expiration must be enforced server-side."),
 ("what goes wrong if the client tracks the session timer", "p", "If the client is used to enforce the session timeout"),
 ("who enforces session expiry?", "s", "Session timeout management and expiration must be enforced server-side."),
 ("How many minutes should the inactivity timeout be for an admin console?", "L", "All sessions should implement an idle or inactivity timeout."),
 ("Should the user get a warning pop-up before the idle timeout logs them out?", "L", "This timeout defines the amount of time a session will remain active"),
 ("Does the idle timeout also apply to API keys used by batch jobs?", "L", "All sessions should implement an idle or inactivity timeout."),
 ("What is the dress code for client visits?", "O", None),
))

x = cut(d, "All sessions should implement an absolute timeout, regardless of session activity.", "impersonate the victim user.")
P(C, d, x, Q(
 ("Should sessions end after a fixed time even if the user is still active?", "p", "All sessions should implement an absolute timeout"),
 ("What happens to the user once the maximum session lifetime is reached?", "p", "After invalidating the session, the user is forced"),
 ("why have a hard cap on how long a session lasts", "p", "The absolute session limits"),
 ("is the max session time measured from login or from last click", "p", "This timeout defines the maximum amount of time"),
 ("absolute timeout start point?", "s", "This timeout defines the maximum amount of time"),
 ("Is the user warned by email when the absolute timeout logs them out?", "L", "After invalidating the session, the user is forced"),
 ("Should admins get a shorter absolute timeout than regular users?", "L", "All sessions should implement an absolute timeout"),
 ("How long does the absolute timeout last for remember-me cookies?", "L", "This timeout defines the maximum amount of time"),
 ("Who do I ask for an extra screen for my desk?", "O", None),
 ("How many days of sick leave do I get per year?", "O", None),
))

x = cut(d, "For most session exchange mechanisms, client side actions", "or `session_destroy()/unset()` (PHP).")
P(C, d, x, Q(
 ("How do I kill a session cookie from the browser side?", "p", "For example, to invalidate a cookie"),
 ("which function ends a session on the server in PHP", "p", "In order to close and invalidate the session on the server side"),
 ("ASP.NET server-side logout call?", "s", "In order to close and invalidate the session on the server side"),
 ("When a user hits log out, does the server need to do anything itself?", "p", "In order to close and invalidate the session on the server side"),
 ("What Expires date should the cleared cookie carry?", "p", "For example, to invalidate a cookie"),
 ("Which call ends a session server-side in a Node.js Express app?", "L", "In order to close and invalidate the session on the server side"),
 ("How do I clear a session token kept in localStorage?", "L", "For most session exchange mechanisms"),
 ("What SameSite value should the emptied session cookie have?", "L", "For example, to invalidate a cookie"),
 ("Who is the point of contact for the office fire drill?", "O", None),
))
