"""Build triples-b.jsonl from the pinned source commits (see README.md).

Run with /work/main/.venv/bin/python build_b.py. Passages are cut out of the
source files by exact start/end markers, so they are character-for-character
copies; table passages are rewritten row by row as `Column: value; ...`.
Answer sentences are written here with single spaces and mapped back to the
exact (possibly line-wrapped) substring of the passage.
"""
import json, re, subprocess, sys
from pathlib import Path

SRC = {
    "google-eng-practices": ("/work/.mirror/google+eng-practices/repo",
                             "3bb3ec25b3b0199f4940b1aa75f0ac5c5753301c"),
    "kubernetes-community": ("/work/.mirror/kubernetes+community/repo",
                             "24e7d8f5409c1a0121394a613746e524f781e044"),
}
_cache = {}

def source(corpus, doc):
    key = (corpus, doc)
    if key not in _cache:
        gitdir, commit = SRC[corpus]
        _cache[key] = subprocess.run(["git", "--git-dir", gitdir, "show", f"{commit}:{doc}"],
                                     check=True, capture_output=True).stdout.decode("utf-8")
    return _cache[key]

def _ws(marker):
    return r"\s+".join(re.escape(t) for t in marker.split())

def cut(corpus, doc, start, end):
    """Exact source text from start marker to end marker (markers match up to whitespace)."""
    text = source(corpus, doc)
    ms = list(re.finditer(_ws(start), text))
    assert len(ms) == 1, (doc, start, len(ms))
    i = ms[0].start()
    me = re.compile(_ws(end)).search(text, i)
    assert me, (doc, end)
    return text[i:me.end()]

def split_row(line):
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [re.sub(r"\s+", " ", c.strip()) for c in line.split("|")]

def table(corpus, doc, header_start, nrows, skip=(), merge_cont=False):
    """Rows of the Markdown table whose header line starts with header_start."""
    lines = source(corpus, doc).split("\n")
    h = next(k for k, l in enumerate(lines) if l.startswith(header_start))
    cols = split_row(lines[h])
    body = []
    for l in lines[h + 2:]:
        if not l.strip():
            break
        if merge_cont and l.startswith(":"):
            cont = [c.strip() for c in l.strip().strip(":").split(":")]
            body[-1] = [(a + " " + b).strip() if b else a for a, b in zip(body[-1], cont)]
            continue
        body.append(split_row(l))
    body = [r for k, r in enumerate(body) if k not in skip][:nrows]
    out = []
    for r in body:
        assert len(r) == len(cols), (doc, r)
        out.append("; ".join(f"{c}: {v}" for c, v in zip(cols, r)))
    return "\n".join(out)

def locate(passage, hint):
    """Exact substring of passage matching hint up to whitespace runs."""
    if hint in passage:
        return hint
    toks = hint.split()
    pat = r"\s+".join(re.escape(t) for t in toks)
    m = re.search(pat, passage)
    if not m:
        raise SystemExit(f"answer not found: {hint!r}\nIN: {passage[:200]!r}")
    return m.group(0)

P = []  # (corpus, doc, passage, rows)

def add(corpus, doc, passage, rows):
    P.append((corpus, doc, passage, rows))

EP, K8 = "google-eng-practices", "kubernetes-community"

# ---------------------------------------------------------------- eng-practices
D = "review/emergencies.md"
add(EP, D, cut(EP, D, "An emergency CL would be a **small** change that:", "give them a [more thorough review](reviewer/looking-for.md)."), [
    ("p", "Does a fix for a bug that is badly hurting customers in prod count as an urgent change?", "An emergency CL would be a **small** change that: allows a major launch to continue instead of rolling back, fixes a bug significantly affecting users in production, handles a pressing legal issue, closes a major security hole, etc."),
    ("p", "Should an urgent review jump the queue ahead of the other reviews I have pending?", "Also (perhaps obviously) such reviews should take priority over all other code reviews, when they come up."),
    ("p", "once the crisis is over do we have to go back and look at the rushed change again", "However, after the emergency is resolved you should look over the emergency CLs again and give them a [more thorough review](reviewer/looking-for.md)."),
    ("t", "does patching a big securty hole qualify as an emergancy change", "An emergency CL would be a **small** change that: allows a major launch to continue instead of rolling back, fixes a bug significantly affecting users in production, handles a pressing legal issue, closes a major security hole, etc."),
    ("l", "How many approvers have to sign off on an emergency change?", "In emergencies we really do care about the speed of the entire code review process, not just the [speed of response](reviewer/speed.md)."),
    ("l", "Who is allowed to declare that a change is an emergency?", "An emergency CL would be a **small** change that: allows a major launch to continue instead of rolling back, fixes a bug significantly affecting users in production, handles a pressing legal issue, closes a major security hole, etc."),
    ("l", "Within how many days must the thorough follow-up review of an emergency change be done?", "However, after the emergency is resolved you should look over the emergency CLs again and give them a [more thorough review](reviewer/looking-for.md)."),
])
add(EP, D, cut(EP, D, "To be clear, the following cases are *not* an emergency:", "Rolling back a CL that is causing test failures or build breakages."), [
    ("p", "All my reviewers are asleep on the other side of the world. Does that make my change urgent?", "The reviewers are all in another timezone where it is currently nighttime or they are away on an off-site."),
    ("p", "Is reverting a change that broke the build treated as an emergency?", "Rolling back a CL that is causing test failures or build breakages."),
    ("p", "its friday evening and i want my change in before the weekend, can i fast track it", "It is the end of the day on a Friday and it would just be great to get this CL in before the developer leaves for the weekend."),
    ("s", "manager wants it today - emergency?", "A manager says that this review has to be complete and the CL checked in today because of a [soft (not hard) deadline](#deadlines)."),
    ("p", "Can I skip normal review because we'd rather launch this week than next week?", "Wanting to launch this week rather than next week (unless there is some actual [hard deadline](#deadlines) for launch such as a partner agreement)."),
    ("l", "Is rolling back a change that is corrupting customer data an emergency?", "Rolling back a CL that is causing test failures or build breakages."),
    ("l", "What should I do if every reviewer is on vacation for two weeks?", "The reviewers are all in another timezone where it is currently nighttime or they are away on an off-site."),
    ("l", "Does an angry customer escalation make a change an emergency?", "A manager says that this review has to be complete and the CL checked in today because of a [soft (not hard) deadline](#deadlines)."),
])
add(EP, D, cut(EP, D, "A hard deadline is one where **something disastrous would happen**", "might be disastrous, but often is not."), [
    ("p", "What makes a deadline count as a hard one?", "A hard deadline is one where **something disastrous would happen** if you miss it."),
    ("p", "does pushing a release back by a week count as a disaster", "Delaying a release for a week is not disastrous."),
    ("p", "If a contract requires us to submit code by a certain date, is that a hard deadline?", "Submitting your CL by a certain date is necessary for a contractual obligation."),
    ("s", "hardware vendor yearly cutoff?", "Some hardware manufacturers only ship new hardware once a year. If you miss the deadline to submit code to them, that could be disastrous, depending on what type of code you're trying to ship."),
    ("t", "is missing a big conferance a hard deadline", "Missing an important conference might be disastrous, but often is not."),
    ("l", "Is delaying a release by three months considered disastrous?", "Delaying a release for a week is not disastrous."),
    ("l", "How often do software vendors accept new code from us?", "Some hardware manufacturers only ship new hardware once a year."),
    ("l", "Who decides whether a deadline is hard or soft?", "A hard deadline is one where **something disastrous would happen** if you miss it."),
])
add(EP, D, cut(EP, D, "Most deadlines are soft deadlines, not hard deadlines.", "have enough time for good review."), [
    ("p", "Is it OK to cut corners on code quality to hit a soft deadline?", "They are important, but you shouldn't be sacrificing code health to make them."),
    ("s", "are most due dates actually firm?", "Most deadlines are soft deadlines, not hard deadlines."),
    ("p", "What goes wrong if we keep rushing features in with shallow review right before each release?", "However, this pattern, if repeated, is a common way for projects to build up overwhelming technical debt."),
    ("p", "People keep cramming big features in at the last minute of the cycle. What should the team change?", "If developers are routinely submitting CLs near the end of the cycle that \"must get in\" with only superficial review, then the team should modify its process so that large feature changes happen early in the cycle and have enough time for good review."),
    ("l", "How many weeks should a release cycle last?", "If you have a long release cycle (several weeks) it can be tempting to sacrifice code review quality to get a feature in before the next cycle."),
    ("l", "Should small bug fixes be scheduled at the start of the release cycle?", "If developers are routinely submitting CLs near the end of the cycle that \"must get in\" with only superficial review, then the team should modify its process so that large feature changes happen early in the cycle and have enough time for good review."),
    ("l", "What share of our deadlines are hard deadlines?", "Most deadlines are soft deadlines, not hard deadlines."),
])

D = "review/reviewer/speed.md"
add(EP, D, cut(EP, D, "When code reviews are slow, several things happen:", "further improvements to existing CLs."), [
    ("p", "What happens to the whole team's output when reviewers take ages to respond?", "**The velocity of the team as a whole is decreased.** Yes, the individual who doesn't respond quickly to the review gets other work done. However, new features and bug fixes for the rest of the team are delayed by days, weeks, or months as each CL waits for review and re-review."),
    ("p", "why do engineers grumble that reviewers are too strict", "**Developers start to protest the code review process.** If a reviewer only responds every few days, but requests major changes to the CL each time, that can be frustrating and difficult for developers. Often, this is expressed as complaints about how \"strict\" the reviewer is being. If the reviewer requests the *same* substantial changes (changes which really do improve code health), but responds *quickly* every time the developer makes an update, the complaints tend to disappear. **Most complaints about the code review process are actually resolved by making the process faster.**"),
    ("p", "Do sluggish reviews make people less likely to clean up or refactor code?", "**Code health can be impacted.** When reviews are slow, there is increased pressure to allow developers to submit CLs that are not as good as they could be. Slow reviews also discourage code cleanups, refactorings, and further improvements to existing CLs."),
    ("l", "How much do slow code reviews cost the company per year?", "**The velocity of the team as a whole is decreased.** Yes, the individual who doesn't respond quickly to the review gets other work done. However, new features and bug fixes for the rest of the team are delayed by days, weeks, or months as each CL waits for review and re-review."),
    ("l", "Do complaints about strict reviewers stop if the reviewer asks for fewer changes?", "**Developers start to protest the code review process.** If a reviewer only responds every few days, but requests major changes to the CL each time, that can be frustrating and difficult for developers. Often, this is expressed as complaints about how \"strict\" the reviewer is being. If the reviewer requests the *same* substantial changes (changes which really do improve code health), but responds *quickly* every time the developer makes an update, the complaints tend to disappear. **Most complaints about the code review process are actually resolved by making the process faster.**"),
    ("l", "What happens to test coverage when reviews are slow?", "**Code health can be impacted.** When reviews are slow, there is increased pressure to allow developers to submit CLs that are not as good as they could be. Slow reviews also discourage code cleanups, refactorings, and further improvements to existing CLs."),
])
add(EP, D, cut(EP, D, "If you are not in the middle of a focused task, **you should do a code review", "review (if needed) within a single day."), [
    ("p", "What's the longest I can wait before replying to someone's review request?", "**One business day is the maximum time it should take to respond** to a code review request (i.e., first thing the next morning)."),
    ("t", "how quikly should i answer a code reveiw request", "**One business day is the maximum time it should take to respond** to a code review request (i.e., first thing the next morning)."),
    ("s", "review response time limit", "**One business day is the maximum time it should take to respond** to a code review request (i.e., first thing the next morning)."),
    ("p", "If I'm not heads-down on something, when should I pick up a review that just landed?", "If you are not in the middle of a focused task, **you should do a code review shortly after it comes in.**"),
    ("p", "Can a normal change go through more than one round of review in the same day?", "Following these guidelines means that a typical CL should get multiple rounds of review (if needed) within a single day."),
    ("l", "What's the maximum time for a change to be fully approved and submitted?", "**One business day is the maximum time it should take to respond** to a code review request (i.e., first thing the next morning)."),
    ("l", "How quickly do I need to answer review requests that arrive over the weekend?", "**One business day is the maximum time it should take to respond** to a code review request (i.e., first thing the next morning)."),
    ("l", "How many review rounds is a change allowed before it must be escalated?", "Following these guidelines means that a typical CL should get multiple rounds of review (if needed) within a single day."),
])
add(EP, D, cut(EP, D, "There is one time where the consideration of personal velocity trumps team", "returning from a meeting, coming back from the breakroom, etc."), [
    ("p", "I'm in the middle of writing code and a review request pops up. Should I drop what I'm doing?", "**If you are in the middle of a focused task, such as writing code, don't interrupt yourself to do a code review.**"),
    ("p", "Why is breaking my coding flow for a review considered worse for the team?", "So interrupting yourself while coding is actually *more* expensive to the team than making another developer wait a bit for a code review."),
    ("p", "when is a good moment to get to a pending review if im mid task", "This could be when your current coding task is completed, after lunch, returning from a meeting, coming back from the breakroom, etc."),
    ("s", "stop coding to review?", "**If you are in the middle of a focused task, such as writing code, don't interrupt yourself to do a code review.**"),
    ("l", "Should my manager avoid interrupting me while I'm coding?", "**If you are in the middle of a focused task, such as writing code, don't interrupt yourself to do a code review.**"),
    ("l", "How many minutes does it take a developer to get back into flow after an interruption?", "Research has shown that it can take a long time for a developer to get back into a smooth flow of development after being interrupted."),
    ("l", "Should I leave a meeting early to handle an urgent review?", "This could be when your current coding task is completed, after lunch, returning from a meeting, coming back from the breakroom, etc."),
])
add(EP, D, cut(EP, D, "If you are too busy to do a full review on a CL when it comes in, you can still", "However, individual responses should still ideally be [fast](#fast)."), [
    ("p", "I'm swamped and can't do a full review right now. What are my options?", "If you are too busy to do a full review on a CL when it comes in, you can still send a quick response that lets the developer know when you will get to it, suggest other reviewers who might be able to respond more quickly, or [provide some initial broad comments](navigate.md)."),
    ("p", "Is it fine to point the author to another reviewer if I'm too busy?", "If you are too busy to do a full review on a CL when it comes in, you can still send a quick response that lets the developer know when you will get to it, suggest other reviewers who might be able to respond more quickly, or [provide some initial broad comments](navigate.md)."),
    ("p", "What should my approval actually mean?", "**It is important that reviewers spend enough time on review that they are certain their \"LGTM\" means \"this code meets [our standards](standard.md).\"**"),
    ("t", "shoud i stop coding just to send a quick ill-get-to-it-later reply", "(Note: none of this means you should interrupt coding even to send a response like this&mdash;send the response at a reasonable break point in your work.)"),
    ("l", "How many backup reviewers should I suggest when I'm too busy?", "If you are too busy to do a full review on a CL when it comes in, you can still send a quick response that lets the developer know when you will get to it, suggest other reviewers who might be able to respond more quickly, or [provide some initial broad comments](navigate.md)."),
    ("l", "Can the author reassign the review to someone else when the reviewer is slow?", "If you are too busy to do a full review on a CL when it comes in, you can still send a quick response that lets the developer know when you will get to it, suggest other reviewers who might be able to respond more quickly, or [provide some initial broad comments](navigate.md)."),
    ("l", "How much time is a reviewer expected to spend on each review, in hours?", "**It is important that reviewers spend enough time on review that they are certain their \"LGTM\" means \"this code meets [our standards](standard.md).\"**"),
])
add(EP, D, cut(EP, D, "When dealing with time zone differences, try to get back to the author while", "before they start work the next day."), [
    ("p", "My teammate works in a different time zone. When should I send my review back to them?", "When dealing with time zone differences, try to get back to the author while they have time to respond before the end of their working hours."),
    ("p", "the author already logged off for the day, by when should my review be finished", "If they have already finished work for the day, then try to make sure your review is done before they start work the next day."),
    ("s", "reviewing across time zones", "When dealing with time zone differences, try to get back to the author while they have time to respond before the end of their working hours."),
    ("l", "How many hours of overlap should reviewers and authors have?", "When dealing with time zone differences, try to get back to the author while they have time to respond before the end of their working hours."),
    ("l", "If my reviewer is in another time zone, when should I answer their comments?", "When dealing with time zone differences, try to get back to the author while they have time to respond before the end of their working hours."),
])
add(EP, D, cut(EP, D, "In order to speed up code reviews, there are certain situations in which a", "waiting for a whole day just to get \"LGTM, Approval\"."), [
    ("p", "Can I approve a change and still leave some comments open?", "In order to speed up code reviews, there are certain situations in which a reviewer should give LGTM/Approval even though they are also leaving unresolved comments on the CL."),
    ("p", "is it ok to approve if the only things left are tiny like sorting imports or a typo", "The suggestions are minor, e.g. sort imports, fix a nearby typo, apply a suggested fix, remove an unused dep, etc."),
    ("p", "When is approving with open comments especially worth doing?", "LGTM With Comments is especially worth considering when the developer and reviewer are in different time zones and otherwise the developer would be waiting for a whole day just to get \"LGTM, Approval\"."),
    ("p", "Do I have to say which of the conditions applies when I approve with comments?", "The reviewer should specify which of these options they intend, if it is not otherwise clear."),
    ("s", "lgtm with comments when", "In order to speed up code reviews, there are certain situations in which a reviewer should give LGTM/Approval even though they are also leaving unresolved comments on the CL."),
    ("l", "What is the maximum number of unresolved comments allowed on an approved change?", "In order to speed up code reviews, there are certain situations in which a reviewer should give LGTM/Approval even though they are also leaving unresolved comments on the CL."),
    ("l", "Can the author mark their own change LGTM with comments?", "In order to speed up code reviews, there are certain situations in which a reviewer should give LGTM/Approval even though they are also leaving unresolved comments on the CL."),
    ("l", "Is approving with open comments allowed when the developer and reviewer sit in the same office?", "LGTM With Comments is especially worth considering when the developer and reviewer are in different time zones and otherwise the developer would be waiting for a whole day just to get \"LGTM, Approval\"."),
])
add(EP, D, cut(EP, D, "If somebody sends you a code review that is so large you're not sure when you", "take some sort of further action quickly, without sacrificing code health to do\nso."), [
    ("p", "Someone sent me an enormous change to review. What should I ask them to do?", "If somebody sends you a code review that is so large you're not sure when you will be able to have time to review it, your typical response should be to ask the developer to [split the CL into several smaller CLs](../developer/small-cls.md) that build on each other, instead of one huge CL that has to be reviewed all at once."),
    ("p", "what if a huge change cant be broken up and i dont have time for all of it", "If a CL *can't* be broken up into smaller CLs, and you don't have time to review the entire thing quickly, then at least write some comments on the overall design of the CL and send it back to the developer for improvement."),
    ("p", "What should a reviewer always aim for so the author isn't stuck?", "One of your goals as a reviewer should be to always unblock the developer or enable them to take some sort of further action quickly, without sacrificing code health to do so."),
    ("l", "How many lines of code make a change too big to review?", "If somebody sends you a code review that is so large you're not sure when you will be able to have time to review it, your typical response should be to ask the developer to [split the CL into several smaller CLs](../developer/small-cls.md) that build on each other, instead of one huge CL that has to be reviewed all at once."),
    ("l", "Can I reject a huge change without giving any comments?", "If a CL *can't* be broken up into smaller CLs, and you don't have time to review the entire thing quickly, then at least write some comments on the overall design of the CL and send it back to the developer for improvement."),
    ("l", "Who splits a big change if the original author has left the team?", "If somebody sends you a code review that is so large you're not sure when you will be able to have time to review it, your typical response should be to ask the developer to [split the CL into several smaller CLs](../developer/small-cls.md) that build on each other, instead of one huge CL that has to be reviewed all at once."),
])

D = "review/developer/small-cls.md"
add(EP, D, cut(EP, D, "Small, simple CLs are:", "too)."), [
    ("p", "Why do small changes get reviewed faster?", "**Reviewed more quickly.** It's easier for a reviewer to find five minutes several times to review small CLs than to set aside a 30 minute block to review one large CL."),
    ("p", "do smaller changes make reverting easier", "**Simpler to roll back.** A large CL will more likely touch files that get updated between the initial CL submission and a rollback CL, complicating the rollback (the intermediate CLs will probably need to be rolled back too)."),
    ("p", "Are you less likely to ship bugs if you keep each change small?", "**Less likely to introduce bugs.** Since you're making fewer changes, it's easier for you and your reviewer to reason effectively about the impact of the CL and see if a bug has been introduced."),
    ("t", "why are small changes eaiser to merge", "**Easier to merge.** Working on a large CL takes a long time, so you will have lots of conflicts when you merge, and you will have to merge frequently."),
    ("p", "What do I lose if my giant change gets rejected because the approach is wrong?", "**Less wasted work if they are rejected.** If you write a huge CL and then your reviewer says that the overall direction is wrong, you've wasted a lot of work."),
    ("l", "Are small changes cheaper to run through CI?", "**Reviewed more quickly.** It's easier for a reviewer to find five minutes several times to review small CLs than to set aside a 30 minute block to review one large CL."),
    ("l", "Do small changes get deployed to production faster?", "**Simpler to roll back.** A large CL will more likely touch files that get updated between the initial CL submission and a rollback CL, complicating the rollback (the intermediate CLs will probably need to be rolled back too)."),
    ("l", "Why is it easier to design a large change well?", "**Easier to design well.** It's a lot easier to polish the design and code health of a small change than it is to refine all the details of a large change."),
])
add(EP, D, cut(EP, D, "Note that **reviewers have discretion to reject your change outright", "It's easier to just write small CLs in the first place."), [
    ("p", "Can a reviewer turn down my change purely because it is too big?", "Note that **reviewers have discretion to reject your change outright for the sole reason of it being too large.**"),
    ("p", "if a reviewer thinks my change is too large what will they usually ask for", "Usually they will thank you for your contribution but request that you somehow make it into a series of smaller changes."),
    ("s", "rejected just for size?", "Note that **reviewers have discretion to reject your change outright for the sole reason of it being too large.**"),
    ("l", "Can a reviewer reject a change outright because it is too small?", "Note that **reviewers have discretion to reject your change outright for the sole reason of it being too large.**"),
    ("l", "Can I appeal to my manager if a reviewer rejects my change for size?", "Note that **reviewers have discretion to reject your change outright for the sole reason of it being too large.**"),
    ("l", "How many smaller changes should a large change be split into?", "Usually they will thank you for your contribution but request that you somehow make it into a series of smaller changes."),
])
add(EP, D, cut(EP, D, "There are no hard and fast rules about how large is \"too large.\"", "Reviewers rarely complain about getting CLs that are too small."), [
    ("p", "Roughly how many lines is a reasonable size for one change?", "100 lines is usually a reasonable size for a CL, and 1000 lines is usually too large, but it's up to the judgment of your reviewer."),
    ("p", "is a 1000 line change too big", "100 lines is usually a reasonable size for a CL, and 1000 lines is usually too large, but it's up to the judgment of your reviewer."),
    ("p", "Does the number of files I touch matter, or only the line count?", "The number of files that a change is spread across also affects its \"size.\""),
    ("s", "200 lines over 50 files ok?", "A 200-line change in one file might be okay, but spread across 50 files it would usually be too large."),
    ("p", "If I'm unsure about the size, should I err on the smaller or the bigger side?", "When in doubt, write CLs that are smaller than you think you need to write."),
    ("t", "do reviewers ever complian that a change is too small", "Reviewers rarely complain about getting CLs that are too small."),
    ("l", "Is a 100-line change that is spread across 50 files acceptable?", "A 200-line change in one file might be okay, but spread across 50 files it would usually be too large."),
    ("l", "How many lines is too large for a change that only adds tests?", "100 lines is usually a reasonable size for a CL, and 1000 lines is usually too large, but it's up to the judgment of your reviewer."),
    ("l", "What is the maximum line count allowed for a configuration-only change?", "100 lines is usually a reasonable size for a CL, and 1000 lines is usually too large, but it's up to the judgment of your reviewer."),
])
add(EP, D, cut(EP, D, "In general, the right size for a CL is **one self-contained change**.", "prevents checking in unused APIs."), [
    ("p", "Should the tests go in the same change as the code?", "The CL should [include related test code](#test_code)."),
    ("p", "if i add a new api should the same change show it being used", "The CL is not so small that its implications are difficult to understand. If you add a new API, you should include a usage of the API in the same CL so that reviewers can better understand how the API will be used. This also prevents checking in unused APIs."),
    ("p", "Is one change supposed to deliver a whole feature at once?", "The CL makes a minimal change that addresses **just one thing**. This is usually just one part of a feature, rather than a whole feature at once. In general it's better to err on the side of writing CLs that are too small vs. CLs that are too large. Work with your reviewer to find out what an acceptable size is."),
    ("s", "ideal change size?", "In general, the right size for a CL is **one self-contained change**."),
    ("l", "If I add a new database table, should the migration go in the same change?", "The CL is not so small that its implications are difficult to understand. If you add a new API, you should include a usage of the API in the same CL so that reviewers can better understand how the API will be used. This also prevents checking in unused APIs."),
    ("l", "Should a change also include the updated user-facing documentation?", "Everything the reviewer needs to understand about the CL (except future development) is in the CL, the CL's description, the existing codebase, or a CL they've already reviewed."),
    ("l", "Should I ask my manager what an acceptable change size is?", "The CL makes a minimal change that addresses **just one thing**. This is usually just one part of a feature, rather than a whole feature at once. In general it's better to err on the side of writing CLs that are too small vs. CLs that are too large. Work with your reviewer to find out what an acceptable size is."),
])
add(EP, D, cut(EP, D, "There are a few situations in which large changes aren't as bad:", "(such as merging and testing) still apply."), [
    ("p", "Does removing an entire file count as a huge change?", "You can usually count deletion of an entire file as being just one line of change, because it doesn't take the reviewer very long to review."),
    ("p", "Can changes produced by an automated refactoring tool be bigger than usual?", "Sometimes a large CL has been generated by an automatic refactoring tool that you trust completely, and the reviewer's job is just to verify and say that they really do want the change. These CLs can be larger, although some of the caveats from above (such as merging and testing) still apply."),
    ("t", "big auto generated refactor ok to send as one cl?", "Sometimes a large CL has been generated by an automatic refactoring tool that you trust completely, and the reviewer's job is just to verify and say that they really do want the change. These CLs can be larger, although some of the caveats from above (such as merging and testing) still apply."),
    ("l", "Does renaming a file count as just one line of change?", "You can usually count deletion of an entire file as being just one line of change, because it doesn't take the reviewer very long to review."),
    ("l", "Can output from a code generator I don't fully trust be sent as one large change?", "Sometimes a large CL has been generated by an automatic refactoring tool that you trust completely, and the reviewer's job is just to verify and say that they really do want the change. These CLs can be larger, although some of the caveats from above (such as merging and testing) still apply."),
    ("l", "Does adding a brand-new file count as a single line of change?", "You can usually count deletion of an entire file as being just one line of change, because it doesn't take the reviewer very long to review."),
])
add(EP, D, cut(EP, D, "Another way to split up a CL is by groupings of files", "production faster than code changes."), [
    ("p", "If I split the proto change from the code that uses it, which one lands first?", "You have to submit the proto CL before the code CL, but they can both be reviewed simultaneously."),
    ("p", "can the two halves be reviewed at the same time", "You have to submit the proto CL before the code CL, but they can both be reviewed simultaneously."),
    ("p", "Why keep a config or experiment change separate from the code change?", "Another example: you send one CL for a code change and another for the configuration or experiment that uses that code; this is easier to roll back too, if necessary, as configuration/experiment files are sometimes pushed to production faster than code changes."),
    ("p", "Should I let each set of reviewers know about the other related change?", "If you do this, you might want to inform both sets of reviewers about the other CL that you wrote, so that they have context for your changes."),
    ("l", "Which goes in first, the database schema change or the code that depends on it?", "You have to submit the proto CL before the code CL, but they can both be reviewed simultaneously."),
    ("l", "Can configuration changes be pushed to production without review?", "Another example: you send one CL for a code change and another for the configuration or experiment that uses that code; this is easier to roll back too, if necessary, as configuration/experiment files are sometimes pushed to production faster than code changes."),
    ("l", "Who has to approve the proto change before it is submitted?", "You have to submit the proto CL before the code CL, but they can both be reviewed simultaneously."),
])
T = table(EP, D, "| Layer ", 4, merge_cont=True)
add(EP, D, T, [
    ("tb", "In the layered split example, what's the API change for division?", "Layer: API; Feature: Multiplication: Add endpoint; Feature: Division: Add endpoint"),
    ("tb", "for the division feature what happens in the service layer", "Layer: Service; Feature: Multiplication: Implement transformations; Feature: Division: Share transformation logic with multiplication"),
    ("tb", "What does the model-layer change do for multiplication?", "Layer: Model; Feature: Multiplication: Add proto definition; Feature: Division: Add proto definition"),
    ("tb", "client layer multiplication task", "Layer: Client; Feature: Multiplication: Add button; Feature: Division: Add button"),
    ("l", "In the split example, what does the service layer do for the subtraction feature?", "Layer: Service; Feature: Multiplication: Implement transformations; Feature: Division: Share transformation logic with multiplication"),
    ("l", "In the split example, what is the documentation change for the division feature?", "Layer: Model; Feature: Multiplication: Add proto definition; Feature: Division: Add proto definition"),
    ("l", "Who reviews the client-layer button change for division?", "Layer: Client; Feature: Multiplication: Add button; Feature: Division: Add button"),
])
add(EP, D, cut(EP, D, "It's usually best to do refactorings in a separate CL", "more difficult if included in your current CL."), [
    ("p", "Can I rename and move a class in the same change where I fix a bug in it?", "For example, moving and renaming a class should be in a different CL from fixing a bug in that class."),
    ("p", "can i sneak a quick variable rename into my feature PR", "Small cleanups such as fixing a local variable name can be included inside of a feature change or bug fix CL, though."),
    ("p", "Who decides whether a refactor is too big to bundle with my current change?", "It's up to the judgment of developers and reviewers to decide when a refactoring is so large that it will make the review more difficult if included in your current CL."),
    ("s", "refactor and feature in one change?", "It's usually best to do refactorings in a separate CL from feature changes or bug fixes."),
    ("l", "Should refactorings be reviewed by a different reviewer than the feature work?", "It's usually best to do refactorings in a separate CL from feature changes or bug fixes."),
    ("l", "Can I upgrade a third-party dependency in the same change as a bug fix?", "For example, moving and renaming a class should be in a different CL from fixing a bug in that class."),
])
add(EP, D, cut(EP, D, "Tests are expected for all Google changes.", "but if they don't, you should add them."), [
    ("p", "Do pure refactoring changes need test coverage too?", "Pure refactoring CLs (that aren't intended to change behavior) should also be covered by tests; ideally, these tests already exist, but if they don't, you should add them."),
    ("p", "if my change modifies logic do i have to add or update tests", "A CL that adds or changes logic should be accompanied by new or updated tests for the new behavior."),
    ("s", "tests required?", "Tests are expected for all Google changes."),
    ("l", "What minimum code coverage percentage does a change need?", "A CL that adds or changes logic should be accompanied by new or updated tests for the new behavior."),
    ("l", "Do documentation-only changes need tests?", "Tests are expected for all Google changes."),
    ("l", "Who writes the tests for a refactoring change, the reviewer or QA?", "Pure refactoring CLs (that aren't intended to change behavior) should also be covered by tests; ideally, these tests already exist, but if they don't, you should add them."),
])
add(EP, D, cut(EP, D, "Before writing a large CL, consider whether preceding it with a refactoring-only", "about writing tests."), [
    ("p", "What should I do if my change really cannot be made small?", "If all of these options fail (which should be extremely rare) then get consent from your reviewers in advance to review a large CL, so they are warned about what is coming."),
    ("p", "should i send a refactoring only change first before the big one", "Before writing a large CL, consider whether preceding it with a refactoring-only CL could pave the way for a cleaner implementation."),
    ("p", "What should I expect once I send a big change for review?", "In this situation, expect to be going through the review process for a long time, be vigilant about not introducing bugs, and be extra diligent about writing tests."),
    ("t", "who shuld i ask for ideas on splitting a big feature", "Talk to your teammates and see if anybody has thoughts on how to implement the functionality in small CLs instead."),
    ("l", "Do I need my manager's sign-off before sending a large change?", "If all of these options fail (which should be extremely rare) then get consent from your reviewers in advance to review a large CL, so they are warned about what is coming."),
    ("l", "How many days ahead must I warn reviewers about a large change?", "If all of these options fail (which should be extremely rare) then get consent from your reviewers in advance to review a large CL, so they are warned about what is coming."),
    ("l", "Should the refactoring-only change be reviewed by a different team?", "Before writing a large CL, consider whether preceding it with a refactoring-only CL could pave the way for a cleaner implementation."),
])

D = "review/developer/cl-descriptions.md"
add(EP, D, cut(EP, D, "The **first line** of a CL description should be a short summary of", "skim through code history much faster."), [
    ("p", "What belongs in the summary line of a change description?", "The **first line** of a CL description should be a short summary of *specifically* **what** *is being done by the CL*, followed by a blank line."),
    ("p", "why does the first line of the description matter so much", "This is what appears in version control history summaries, so it should be informative enough that future code searchers don't have to read your CL or its whole description to understand what your CL actually *did* or how it differs from other CLs."),
    ("s", "blank line after summary?", "The **first line** of a CL description should be a short summary of *specifically* **what** *is being done by the CL*, followed by a blank line."),
    ("l", "What's the character limit for the first line of a change description?", "The **first line** of a CL description should be a short summary of *specifically* **what** *is being done by the CL*, followed by a blank line."),
    ("l", "What should the last line of a change description contain?", "The **first line** of a CL description should be a short summary of *specifically* **what** *is being done by the CL*, followed by a blank line."),
    ("l", "Should the first line mention the bug number?", "That is, the first line should stand alone, allowing readers to skim through code history much faster."),
])
add(EP, D, cut(EP, D, "By tradition, the first line of a CL description is a complete sentence, written", "though."), [
    ("p", "Should the summary line be written as a command?", "By tradition, the first line of a CL description is a complete sentence, written as though it were an order (an imperative sentence)."),
    ("p", "do i have to write the entire description in imperative form", "You don't have to write the rest of the description as an imperative sentence, though."),
    ("p", "Is something like 'Deleting the old RPC and replacing it' a good way to start the description?", "For example, say \\\"**Delete** the FizzBuzz RPC and **replace** it with the new system.\" instead of \\\"**Deleting** the FizzBuzz RPC and **replacing** it with the new system.\""),
    ("l", "Should the summary line end with a period?", "By tradition, the first line of a CL description is a complete sentence, written as though it were an order (an imperative sentence)."),
    ("l", "What language should change descriptions be written in?", "By tradition, the first line of a CL description is a complete sentence, written as though it were an order (an imperative sentence)."),
    ("l", "Does the body of the description have to use the passive voice?", "You don't have to write the rest of the description as an imperative sentence, though."),
])
add(EP, D, cut(EP, D, "The [first line](#first-line) should be a short, focused summary, while the rest", "Put the CL in context."), [
    ("p", "Besides the summary, what should the rest of the description cover?", "The [first line](#first-line) should be a short, focused summary, while the rest of the description should fill in the details and include any supplemental information a reader needs to understand the changelist holistically."),
    ("p", "Should I admit the downsides of my approach in the description?", "If there are any shortcomings to the approach, they should be mentioned."),
    ("p", "can i put benchmark numbers and bug ids in the description", "If relevant, include background information such as bug numbers, benchmark results, and links to design documents."),
    ("p", "Is just linking to a doc enough context?", "If you include links to external resources consider that they may not be visible to future readers due to access restrictions or retention policies."),
    ("t", "do tiny changes need a proper descripton too", "Even small CLs deserve a little attention to detail."),
    ("l", "Should the description list who reviewed the change?", "The [first line](#first-line) should be a short, focused summary, while the rest of the description should fill in the details and include any supplemental information a reader needs to understand the changelist holistically."),
    ("l", "How many paragraphs long should the description body be?", "The [first line](#first-line) should be a short, focused summary, while the rest of the description should fill in the details and include any supplemental information a reader needs to understand the changelist holistically."),
    ("l", "Should I attach screenshots for UI changes?", "If relevant, include background information such as bug numbers, benchmark results, and links to design documents."),
])
add(EP, D, cut(EP, D, "\"Fix bug\" is an inadequate CL description.", "enough useful information."), [
    ("p", "is 'fix build' an acceptable commit message", "\"Fix build.\""),
    ("p", "Why are messages like 'Phase 1' considered poor?", "Although short, they do not provide enough useful information."),
    ("s", "\"fix bug\" good enough?", "\"Fix bug\" is an inadequate CL description."),
    ("l", "Is 'Fix null pointer crash in the login handler' an acceptable description?", "\"Fix bug\" is an inadequate CL description."),
    ("l", "Which team wrote the 'kill weird URLs' description?", "Some of those are real CL descriptions."),
    ("l", "How many bad descriptions get a change rejected automatically?", "Some of those are real CL descriptions."),
])
add(EP, D, cut(EP, D, "Tags are manually entered labels that can be used to categorize CLs.", "as this can obscure the content."), [
    ("p", "Am I required to add tags to my change description?", "Using tags is optional."),
    ("p", "can i put tags on the summary line", "Limit the usage of tags in the first line, as this can obscure the content."),
    ("p", "What are the labels in change descriptions for?", "Tags are manually entered labels that can be used to categorize CLs."),
    ("l", "What's the maximum number of tags per change?", "Limit the usage of tags in the first line, as this can obscure the content."),
    ("l", "Which tags are mandatory for security fixes?", "Using tags is optional."),
    ("l", "Do tags get added automatically by the CI system?", "Tags are manually entered labels that can be used to categorize CLs."),
])

D = "review/developer/handling-comments.md"
add(EP, D, cut(EP, D, "**Never respond in anger to code review comments.**", "escalate to your manager as\nappropriate."), [
    ("p", "I'm too annoyed to answer a review comment calmly. What should I do?", "If you are too angry or annoyed to respond kindly, then walk away from your computer for a while, or work on something else until you feel calm enough to reply politely."),
    ("p", "a reviewer is being rude in their comments what do i do", "In general, if a reviewer isn't providing feedback in a way that's constructive and polite, explain this to them in person."),
    ("p", "If talking privately to a rude reviewer doesn't help, who do I go to?", "If they also respond in a non-constructive way to this private discussion, or it doesn't have the intended effect, then escalate to your manager as appropriate."),
    ("s", "replying angrily to reviewers", "**Never respond in anger to code review comments.**"),
    ("p", "Can't meet the reviewer face to face or on video—how should I raise the tone problem?", "If you can't talk to them in person or on a video call, then send them a private email."),
    ("l", "What should a reviewer do if the author answers rudely?", "In general, if a reviewer isn't providing feedback in a way that's constructive and polite, explain this to them in person."),
    ("l", "Should I report a rude reviewer to HR?", "If they also respond in a non-constructive way to this private discussion, or it doesn't have the intended effect, then escalate to your manager as appropriate."),
    ("l", "How many hours should I wait before replying to an annoying comment?", "If you are too angry or annoyed to respond kindly, then walk away from your computer for a while, or work on something else until you feel calm enough to reply politely."),
])
add(EP, D, cut(EP, D, "If a reviewer says that they don't understand something in your code, your first", "adding code comments does help them."), [
    ("p", "The reviewer didn't get part of my code. Should I just explain it in the review thread?", "If a reviewer says that they don't understand something in your code, your first response should be to clarify the code itself."),
    ("p", "when should i add a comment in the code instead of rewriting it", "If the code can't be clarified, add a code comment that explains why the code is there."),
    ("p", "Why not simply answer the question in the review tool?", "Writing a response in the code review tool doesn't help future code readers, but clarifying your code or adding code comments does help them."),
    ("l", "If a reviewer doesn't understand my design doc, what should I do?", "If a reviewer says that they don't understand something in your code, your first response should be to clarify the code itself."),
    ("l", "Should I add a code comment when the reviewer disagrees with my approach?", "If the code can't be clarified, add a code comment that explains why the code is there."),
    ("l", "If a reviewer misunderstands my code, should I ask a different reviewer?", "If a reviewer didn't understand some piece of your code, it's likely other future readers of the code won't understand either."),
])

D = "review/reviewer/pushback.md"
add(EP, D, cut(EP, D, "If a CL introduces new complexity, it must be cleaned up before submission", "references the filed\nbug."), [
    ("p", "Can new complexity be tidied up in a follow-up change later?", "If a CL introduces new complexity, it must be cleaned up before submission unless it is an [emergency](../emergencies.md)."),
    ("p", "The change exposes nearby problems we can't fix right now. What should happen?", "If the CL exposes surrounding problems and they can't be addressed right now, the developer should file a bug for the cleanup and assign it to themselves so that it doesn't get lost."),
    ("p", "who should the cleanup bug be assigned to", "If the CL exposes surrounding problems and they can't be addressed right now, the developer should file a bug for the cleanup and assign it to themselves so that it doesn't get lost."),
    ("s", "TODO comment allowed?", "They can optionally also write a TODO comment in the code that references the filed bug."),
    ("l", "What priority should the cleanup bug be filed with?", "If the CL exposes surrounding problems and they can't be addressed right now, the developer should file a bug for the cleanup and assign it to themselves so that it doesn't get lost."),
    ("l", "Should the reviewer file the cleanup bug and assign it to the author?", "If the CL exposes surrounding problems and they can't be addressed right now, the developer should file a bug for the cleanup and assign it to themselves so that it doesn't get lost."),
    ("l", "How soon must a TODO comment's bug be fixed?", "They can optionally also write a TODO comment in the code that references the filed bug."),
])
add(EP, D, cut(EP, D, "If you previously had fairly lax code reviews and you switch to having strict", "value you're adding by being strict."), [
    ("p", "We tightened up our reviews and people are complaining loudly. What helps?", "Improving the [speed](speed.md) of your code reviews usually causes these complaints to fade away."),
    ("p", "how long until people stop complaining about stricter reviews", "Sometimes it can take months for these complaints to fade away, but eventually developers tend to see the value of strict code reviews as they see what great code they help generate."),
    ("t", "do the loudest complainers ever come arround", "Sometimes the loudest protesters even become your strongest supporters once something happens that causes them to really see the value you're adding by being strict."),
    ("l", "Should we relax our review standards if complaints continue?", "Improving the [speed](speed.md) of your code reviews usually causes these complaints to fade away."),
    ("l", "How long does it take for managers to accept stricter reviews?", "Sometimes it can take months for these complaints to fade away, but eventually developers tend to see the value of strict code reviews as they see what great code they help generate."),
])

D = "review/reviewer/standard.md"
add(EP, D, cut(EP, D, "**In general, reviewers should favor approving a CL once it is in a state where", "deny approval even if the code is well-designed."), [
    ("p", "Should I hold off approving until a change is perfect?", "**In general, reviewers should favor approving a CL once it is in a state where it definitely improves the overall code health of the system being worked on, even if the CL isn't perfect.**"),
    ("p", "can i reject a nicely written change for a feature i dont want in our system", "For example, if a CL adds a feature that the reviewer doesn't want in their system, then the reviewer can certainly deny approval even if the code is well-designed."),
    ("s", "when to approve", "**In general, reviewers should favor approving a CL once it is in a state where it definitely improves the overall code health of the system being worked on, even if the CL isn't perfect.**"),
    ("l", "Can the author override a reviewer who refuses to approve?", "For example, if a CL adds a feature that the reviewer doesn't want in their system, then the reviewer can certainly deny approval even if the code is well-designed."),
    ("l", "Can a reviewer block a change because the author's coding style differs from theirs?", "For example, if a CL adds a feature that the reviewer doesn't want in their system, then the reviewer can certainly deny approval even if the code is well-designed."),
    ("l", "How many reviewers have to approve a change before it can be submitted?", "**In general, reviewers should favor approving a CL once it is in a state where it definitely improves the overall code health of the system being worked on, even if the CL isn't perfect.**"),
])
add(EP, D, cut(EP, D, "Reviewers should _always_ feel free to leave comments expressing that something", "would be in an [emergency](../emergencies.md)."), [
    ("p", "How do I flag a comment as optional polish the author can skip?", "Reviewers should _always_ feel free to leave comments expressing that something could be better, but if it's not very important, prefix it with something like \"Nit: \" to let the author know that it's just a point of polish that they could choose to ignore."),
    ("p", "is it ever ok to check in code that makes the codebase worse", "The only time you would do that would be in an [emergency](../emergencies.md)."),
    ("s", "nit prefix meaning", "Reviewers should _always_ feel free to leave comments expressing that something could be better, but if it's not very important, prefix it with something like \"Nit: \" to let the author know that it's just a point of polish that they could choose to ignore."),
    ("l", "What prefix marks a comment that must be fixed before approval?", "Reviewers should _always_ feel free to leave comments expressing that something could be better, but if it's not very important, prefix it with something like \"Nit: \" to let the author know that it's just a point of polish that they could choose to ignore."),
    ("l", "Who signs off when an emergency change worsens code health?", "The only time you would do that would be in an [emergency](../emergencies.md)."),
])
add(EP, D, cut(EP, D, "*   Technical facts and data overrule opinions and personal preferences.", "worsen the overall code health of the system."), [
    ("p", "What wins when someone's opinion conflicts with hard data?", "Technical facts and data overrule opinions and personal preferences."),
    ("p", "whats the final word on code style questions", "On matters of style, the [style guide](http://google.github.io/styleguide/) is the absolute authority."),
    ("p", "There's no established style yet. Whose preference do we go with?", "If there is no previous style, accept the author's."),
    ("p", "If the author shows several designs are equally valid, who gets to choose?", "If the author can demonstrate (either through data or based on solid engineering principles) that several approaches are equally valid, then the reviewer should accept the preference of the author."),
    ("l", "Who maintains the style guide?", "On matters of style, the [style guide](http://google.github.io/styleguide/) is the absolute authority."),
    ("l", "Which style guide applies to SQL queries?", "On matters of style, the [style guide](http://google.github.io/styleguide/) is the absolute authority."),
    ("l", "If the reviewer can show two designs are equally valid, whose preference wins?", "If the author can demonstrate (either through data or based on solid engineering principles) that several approaches are equally valid, then the reviewer should accept the preference of the author."),
])
add(EP, D, cut(EP, D, "When coming to consensus becomes especially difficult, it can help to have a", "can't come to an agreement.**"), [
    ("p", "My reviewer and I keep going back and forth in comments without agreeing. What next?", "When coming to consensus becomes especially difficult, it can help to have a face-to-face meeting or a video conference between the reviewer and the author, instead of just trying to resolve the conflict through code review comments."),
    ("p", "if we settle it on a call do we need to write anything down", "(If you do this, though, make sure to record the results of the discussion as a comment on the CL, for future readers.)"),
    ("p", "Who can we escalate a stuck review disagreement to?", "Often the escalation path is to a broader team discussion, having a Technical Lead weigh in, asking for a decision from a maintainer of the code, or asking an Eng Manager to help out."),
    ("s", "review deadlock escalation", "If that doesn't resolve the situation, the most common way to resolve it would be to escalate."),
    ("l", "How many days should we try to agree before escalating?", "If that doesn't resolve the situation, the most common way to resolve it would be to escalate."),
    ("l", "Can a review disagreement be escalated to the VP of Engineering?", "Often the escalation path is to a broader team discussion, having a Technical Lead weigh in, asking for a decision from a maintainer of the code, or asking an Eng Manager to help out."),
    ("l", "Where should the outcome of an escalation to the Tech Lead be recorded?", "(If you do this, though, make sure to record the results of the discussion as a comment on the CL, for future readers.)"),
])

D = "review/reviewer/navigate.md"
add(EP, D, cut(EP, D, "If you see some major design problems with this part of the CL, you should send", "code under review is going to disappear and not matter anyway."), [
    ("p", "I spotted a big design flaw but haven't reviewed the rest yet. Should I wait before commenting?", "If you see some major design problems with this part of the CL, you should send those comments immediately, even if you don't have time to review the rest of the CL right now."),
    ("p", "why bother reviewing the rest if the design is badly wrong", "In fact, reviewing the rest of the CL might be a waste of time, because if the design problems are significant enough, a lot of the other code under review is going to disappear and not matter anyway."),
    ("s", "design problems - comment right away?", "If you see some major design problems with this part of the CL, you should send those comments immediately, even if you don't have time to review the rest of the CL right now."),
    ("l", "Should minor naming issues be sent immediately before finishing the review?", "If you see some major design problems with this part of the CL, you should send those comments immediately, even if you don't have time to review the rest of the CL right now."),
    ("l", "Who should be cc'd on comments about major design problems?", "If you see some major design problems with this part of the CL, you should send those comments immediately, even if you don't have time to review the rest of the CL right now."),
])

# ---------------------------------------------------------------- kubernetes/community
D = "community-membership.md"
add(K8, D, table(K8, D, "| Role | Responsibilities", 4), [
    ("tb", "What do I need to become a member?", "Role: Member; Responsibilities: Active contributor in the community; Requirements: Sponsored by 2 reviewers and multiple contributions to the project; Defined by: Kubernetes GitHub org member"),
    ("tb", "approver responsibilities", "Role: Approver; Responsibilities: Contributions acceptance approval; Requirements: Highly experienced active reviewer and contributor to a subproject; Defined by: [OWNERS] file approver entry"),
    ("tb", "Who decides where a subproject is heading?", "Role: Subproject owner; Responsibilities: Set direction and priorities for a subproject; Requirements: Demonstrated responsibility and excellent technical judgement for the subproject; Defined by: [sigs.yaml] subproject [OWNERS] file *owners* entry"),
    ("tb", "where is someone's reviewer status recorded", "Role: Reviewer; Responsibilities: Review contributions from other members; Requirements: History of review and authorship in a subproject; Defined by: [OWNERS] file reviewer entry"),
    ("tb", "how many sponsers does a new member need", "Role: Member; Responsibilities: Active contributor in the community; Requirements: Sponsored by 2 reviewers and multiple contributions to the project; Defined by: Kubernetes GitHub org member"),
    ("l", "How many sponsors does a new approver need?", "Role: Approver; Responsibilities: Contributions acceptance approval; Requirements: Highly experienced active reviewer and contributor to a subproject; Defined by: [OWNERS] file approver entry"),
    ("l", "What are the requirements to become a SIG chair?", "Role: Subproject owner; Responsibilities: Set direction and priorities for a subproject; Requirements: Demonstrated responsibility and excellent technical judgement for the subproject; Defined by: [sigs.yaml] subproject [OWNERS] file *owners* entry"),
    ("l", "How long does someone have to be a reviewer before becoming a subproject owner?", "Role: Subproject owner; Responsibilities: Set direction and priorities for a subproject; Requirements: Demonstrated responsibility and excellent technical judgement for the subproject; Defined by: [sigs.yaml] subproject [OWNERS] file *owners* entry"),
])
add(K8, D, cut(K8, D, "Members are *[continuously active]* contributors in the community.", "remain active contributors to the community."), [
    ("p", "What can org members do that outside contributors can't?", "They can have issues and PRs assigned to them, participate in SIGs through GitHub teams, and pre-submit tests are automatically run for their PRs."),
    ("p", "do presubmit tests kick off automatically on a member's pull requests", "They can have issues and PRs assigned to them, participate in SIGs through GitHub teams, and pre-submit tests are automatically run for their PRs."),
    ("p", "Once I'm a member, am I expected to keep contributing?", "Members are expected to remain active contributors to the community."),
    ("l", "Can members approve pull requests?", "They can have issues and PRs assigned to them, participate in SIGs through GitHub teams, and pre-submit tests are automatically run for their PRs."),
    ("l", "How long does an org membership last before it must be renewed?", "Members are expected to remain active contributors to the community."),
    ("l", "Do non-member contributors get tests run automatically on their PRs?", "They can have issues and PRs assigned to them, participate in SIGs through GitHub teams, and pre-submit tests are automatically run for their PRs."),
])
add(K8, D, cut(K8, D, "- Sponsored by 2 reviewers. **Note the following requirements for sponsors**:", "to demonstrate integration across community."), [
    ("p", "Can both people vouching for me work for the same employer?", "Sponsors must be from multiple member companies to demonstrate integration across community."),
    ("p", "what role does someone need to be able to sponsor me", "Sponsors must be reviewers or approvers in at least one OWNERS file within one of the [Kubernetes GitHub organizations]*."),
    ("s", "number of sponsors for membership", "Sponsored by 2 reviewers."),
    ("t", "does my sponser need to have actualy worked with me", "Sponsors must have close interactions with the prospective member - e.g. code/design/proposal review, coordinating on issues, etc."),
    ("l", "How many sponsors do I need to be promoted to reviewer?", "Sponsored by 2 reviewers."),
    ("l", "Can a sponsor withdraw their sponsorship after I become a member?", "Sponsors must have close interactions with the prospective member - e.g. code/design/proposal review, coordinating on issues, etc."),
    ("l", "Can two sponsors from the same company sponsor an approver nomination?", "Sponsors must be from multiple member companies to demonstrate integration across community."),
])
add(K8, D, cut(K8, D, "- **[Open an issue][membership request] against the kubernetes/org repo**", "Any missing information will be requested."), [
    ("p", "Where do I file my request to join the org?", "**[Open an issue][membership request] against the kubernetes/org repo**"),
    ("p", "how do my sponsors confirm they back me", "Have your sponsoring reviewers reply confirmation of sponsorship: `+1`"),
    ("p", "Who looks at my membership request after the sponsors respond?", "Once your sponsors have responded, your request will be reviewed by the [Kubernetes GitHub Admin team], in accordance with their [SLO]."),
    ("p", "Should I tag my sponsors in the issue?", "Ensure your sponsors are @mentioned on the issue"),
    ("l", "How many days does the admin team take to process a membership request?", "Once your sponsors have responded, your request will be reviewed by the [Kubernetes GitHub Admin team], in accordance with their [SLO]."),
    ("l", "Where do I file a request to become an approver?", "**[Open an issue][membership request] against the kubernetes/org repo**"),
    ("l", "What happens if one of my sponsors doesn't reply with +1 within a month?", "Have your sponsoring reviewers reply confirmation of sponsorship: `+1`"),
])
add(K8, D, cut(K8, D, "- Responsive to issues and PRs assigned to them", "to close issues or PRs as well."), [
    ("p", "Can members give an lgtm on open pull requests?", "Members can do `/lgtm` on open PRs."),
    ("p", "as a member do i still need someone to ok-to-test my own PRs", "Tests can be run against their PRs automatically. No `/ok-to-test` needed."),
    ("p", "Can a member shut an issue themselves?", "Members can do `/ok-to-test` for PRs that have a `needs-ok-to-test` label, and use commands like `/close` to close issues or PRs as well."),
    ("p", "What am I on the hook for after my code gets merged?", "Active owner of code they have contributed (unless ownership is explicitly transferred)"),
    ("l", "Can members use /approve on pull requests?", "Members can do `/lgtm` on open PRs."),
    ("l", "Can non-members use /lgtm on open PRs?", "Members can do `/lgtm` on open PRs."),
    ("l", "Can members merge pull requests directly into main?", "Members can do `/ok-to-test` for PRs that have a `needs-ok-to-test` label, and use commands like `/close` to close issues or PRs as well."),
])
add(K8, D, cut(K8, D, "- Member for at least 3 months", "or be nominated by a robot"), [
    ("p", "How long do I have to be a member before I can become a reviewer?", "Member for at least 3 months"),
    ("p", "how many prs do i need to have reviewed or merged to be a reviewer", "Reviewed or merged at least 20 substantial PRs to the codebase"),
    ("p", "Who sponsors someone for reviewer?", "Sponsored by a subproject approver"),
    ("p", "Can I put myself forward as a reviewer?", "May either self-nominate, be nominated by an approver in this subproject, or be nominated by a robot"),
    ("s", "reviewer primary review count", "Primary reviewer for at least 5 PRs to the codebase"),
    ("l", "How long must I be a reviewer before I can become an approver?", "Member for at least 3 months"),
    ("l", "Do reviewer candidates need to attend SIG meetings?", "Knowledgeable about the codebase"),
    ("l", "How many PRs must a reviewer candidate have authored themselves?", "Reviewed or merged at least 20 substantial PRs to the codebase"),
])
add(K8, D, cut(K8, D, "- Reviewer of the codebase for at least 3 months", "Done through PR to update the top-level OWNERS file"), [
    ("p", "How long do I need to have been a reviewer before becoming an approver?", "Reviewer of the codebase for at least 3 months"),
    ("p", "Who nominates new approvers?", "Nominated by a subproject owner"),
    ("p", "how many PRs reviewed or merged to qualify as approver", "Reviewed or merged at least 30 PRs to the codebase"),
    ("t", "aprover nomination goes through a pr to which file", "Done through PR to update the top-level OWNERS file"),
    ("l", "How long must I be an org member before I can become an approver?", "Reviewer of the codebase for at least 3 months"),
    ("l", "Who nominates new subproject owners?", "Nominated by a subproject owner"),
    ("l", "How many sponsors does an approver nomination need?", "Nominated by a subproject owner"),
])
add(K8, D, cut(K8, D, "Inactive members are defined as members of one of the Kubernetes Organizations", "issue to quickly be re-instated."), [
    ("p", "How long can I go without contributing before I'm removed from the org?", "Inactive members are defined as members of one of the Kubernetes Organizations with **no** contributions across any organization within 12 months."),
    ("p", "what tool is used to measure inactivity", "This is measured by the CNCF [DevStats project]."),
    ("p", "I only do non-code work and got dropped from the org by mistake. How do I get back in?", "If a non-code contributing member is accidentally removed this way, they may open an issue to quickly be re-instated."),
    ("s", "inactivity cutoff", "Inactive members are defined as members of one of the Kubernetes Organizations with **no** contributions across any organization within 12 months."),
    ("l", "How long can a reviewer be inactive before being removed from OWNERS files?", "Inactive members are defined as members of one of the Kubernetes Organizations with **no** contributions across any organization within 12 months."),
    ("l", "Are inactive members warned by email before they are removed?", "Inactive members are defined as members of one of the Kubernetes Organizations with **no** contributions across any organization within 12 months."),
    ("l", "Does DevStats count commits made from a second GitHub account?", "**Note:** Devstats does not take into account non-code contributions."),
])

D = "contributors/guide/security.md"
add(K8, D, cut(K8, D, "Report privately through HackerOne", "and we will not rush a fix we are not confident in."), [
    ("p", "How do I privately report a vulnerability I found?", "Report privately through HackerOne (`https://hackerone.com/kubernetes`) or by email to `security@kubernetes.io`."),
    ("p", "how long before someone acknowledges my security report", "The SRC acknowledges reports within three working days and begins triage within seven calendar days, but does not commit to a deterministic investigation or fix deadline."),
    ("p", "What evidence should I include with a vulnerability report?", "Include a reproducible proof of concept exploit code/script, symbol-level reachability evidence, or a code trace from an attacker-reachable entry point to the flaw."),
    ("p", "Is there a guaranteed deadline for a security fix?", "The SRC acknowledges reports within three working days and begins triage within seven calendar days, but does not commit to a deterministic investigation or fix deadline."),
    ("t", "when does triage start on a securty report", "The SRC acknowledges reports within three working days and begins triage within seven calendar days, but does not commit to a deterministic investigation or fix deadline."),
    ("l", "How long does the security team take to publish a CVE after a report?", "The SRC acknowledges reports within three working days and begins triage within seven calendar days, but does not commit to a deterministic investigation or fix deadline."),
    ("l", "What bounty is paid for a reported vulnerability?", "Report privately through HackerOne (`https://hackerone.com/kubernetes`) or by email to `security@kubernetes.io`."),
    ("l", "How quickly are reports sent to the public issue tracker acknowledged?", "The SRC acknowledges reports within three working days and begins triage within seven calendar days, but does not commit to a deterministic investigation or fix deadline."),
])
add(K8, D, cut(K8, D, "Supported releases are the most recent three minors", "for older versions."), [
    ("p", "Which versions still get patches?", "Supported releases are the most recent three minors (N, N-1, N-2), each receiving roughly fourteen months of patch support."),
    ("p", "how long is a minor release supported with patches", "Supported releases are the most recent three minors (N, N-1, N-2), each receiving roughly fourteen months of patch support."),
    ("p", "Do security fixes get backported to older supported releases?", "We backport security fixes to all three."),
    ("p", "We're on an end-of-life version. Will it get a security patch?", "We do not patch end-of-life releases; commercial distributions often provide extended support for older versions."),
    ("l", "How long do commercial distributions support older versions?", "We do not patch end-of-life releases; commercial distributions often provide extended support for older versions."),
    ("l", "Are non-security bug fixes backported to all three supported releases?", "We backport security fixes to all three."),
    ("l", "How many patch releases does each minor version get per month?", "Supported releases are the most recent three minors (N, N-1, N-2), each receiving roughly fourteen months of patch support."),
])

D = "committee-code-of-conduct/incident-process.md"
add(K8, D, cut(K8, D, "There are no hard boundaries of the community, but common places we are asked to extend guidance to are:", "we might choose to act."), [
    ("p", "Does the conduct policy cover behaviour at meetups and conferences?", "Kubernetes events and meetups"),
    ("p", "could someone's unrelated social media posts still be acted on", "In some cases, where individual social media messages are not related to Kubernetes but have been reported to the Code of Conduct Committee and are making project members feel unsafe or unwelcome, we might choose to act."),
    ("s", "code of conduct scope", "There are no hard boundaries of the community, but common places we are asked to extend guidance to are:"),
    ("l", "Does the code of conduct apply to private company Slack workspaces of contributors?", "Official Kubernetes communication channels"),
    ("l", "Who monitors social media for code of conduct violations?", "In some cases, where individual social media messages are not related to Kubernetes but have been reported to the Code of Conduct Committee and are making project members feel unsafe or unwelcome, we might choose to act."),
])
add(K8, D, cut(K8, D, "The Code of Conduct Committee accepts reports from everyone who interacts", "if an incident is ongoing and we have not been contacted."), [
    ("p", "Can a vendor at KubeCon report someone's behaviour?", "Attendees and vendors at KubeCon/CloudNativeCon"),
    ("p", "do i have to be a contributor to file a conduct report", "The Code of Conduct Committee accepts reports from everyone who interacts with the Kubernetes project community, contributor or otherwise."),
    ("p", "Can companies that use Kubernetes submit a report?", "Vendors/companies/projects which use Kubernetes and need to interact with the community as a result"),
    ("l", "Can a report be submitted on behalf of someone else without their consent?", "The Code of Conduct Committee accepts reports from everyone who interacts with the Kubernetes project community, contributor or otherwise."),
    ("l", "Which KubeCon staff member takes conduct reports on site?", "Attendees and vendors at KubeCon/CloudNativeCon"),
    ("l", "What is the deadline for reporting an incident after it happened?", "At times we encourage community members to email us if an incident is ongoing and we have not been contacted."),
])
add(K8, D, cut(K8, D, "The Code of Conduct Committee's primary means of contact is our email address", "to the extent permitted by law."), [
    ("p", "What's the main way to contact the conduct committee privately?", "The Code of Conduct Committee's primary means of contact is our email address, conduct@kubernetes.io."),
    ("p", "can i dm a committee member on slack instead of emailing", "We can also be reached via Slack direct messages to individual committee members (see [member list](https://github.com/kubernetes/community/tree/master/committee-code-of-conduct#members)) or otherwise, though we might direct you to contact us via email."),
    ("p", "Will my report be kept confidential?", "All incident-related discussions happen in private spaces between current Code of Conduct Committee members, and all members agree when joining the Committee to maintain the confidentiality of incidents to the extent permitted by law."),
    ("l", "Is there a phone hotline for reaching the conduct committee?", "The Code of Conduct Committee's primary means of contact is our email address, conduct@kubernetes.io."),
    ("l", "What is the email address for reporting security vulnerabilities?", "The Code of Conduct Committee's primary means of contact is our email address, conduct@kubernetes.io."),
    ("l", "Are incident details ever shared with the reporter's employer?", "All incident-related discussions happen in private spaces between current Code of Conduct Committee members, and all members agree when joining the Committee to maintain the confidentiality of incidents to the extent permitted by law."),
])
add(K8, D, cut(K8, D, "The Code of Conduct Committee responds to all emails in a timely manner", "This allows us to meet our SLA to the community."), [
    ("p", "How soon will the conduct committee get back to me after I email them?", "The Code of Conduct Committee responds to all emails in a timely manner, usually within a few days."),
    ("p", "how many people are watching for incoming reports at any time", "We maintain a triage rotation schedule so that there are at least two people watching for incoming reports."),
    ("p", "Does the committee ever hold an emergency meeting about a report?", "When necessary, we may alert other members and call for an urgent meeting, but in most cases, we discuss asynchronously and develop a response plan."),
    ("s", "conduct report response time", "The Code of Conduct Committee responds to all emails in a timely manner, usually within a few days."),
    ("l", "How long does the committee take to reach a final decision on a report?", "The Code of Conduct Committee responds to all emails in a timely manner, usually within a few days."),
    ("l", "How many committee members must attend an urgent meeting for it to be valid?", "When necessary, we may alert other members and call for an urgent meeting, but in most cases, we discuss asynchronously and develop a response plan."),
    ("l", "What is the committee's SLA for resolving high-severity incidents?", "This allows us to meet our SLA to the community."),
])
add(K8, D, cut(K8, D, "Before beginning investigation on an incident, members can recuse", "never have a majority of the Committee from a single employer."), [
    ("p", "Can a committee member step aside from a case involving their coworker?", "Direct reporting relationships, or company work relationships that would cause the investigation to appear inappropriate"),
    ("p", "what happens if every committee member has a conflict of interest", "If all members of the Code of Conduct Committee felt the need to recuse themselves from an incident, the incident would be handled by our third party mediator."),
    ("p", "Should a member who co-leads a SIG with the reporter sit out the investigation?", "Close working relationships in the Kubernetes community, for example co-leading a SIG with the reporter or someone else mentioned in the report"),
    ("p", "Can most of the committee come from the same company?", "To reduce the likelihood of recusals, our [election](election.md) process stipulates that we may never have a majority of the Committee from a single employer."),
    ("l", "Who pays for the third party mediator?", "If all members of the Code of Conduct Committee felt the need to recuse themselves from an incident, the incident would be handled by our third party mediator."),
    ("l", "Can the reporter ask for a specific committee member to be recused?", "Before beginning investigation on an incident, members can recuse from (or refuse to pass judgement on) an incident if they feel a relationship with someone in the incident may hinder impartiality or create a perception of impropriety with respect to individuals involved in the reported incident."),
    ("l", "What happens if only half of the committee recuses itself?", "If all members of the Code of Conduct Committee felt the need to recuse themselves from an incident, the incident would be handled by our third party mediator."),
])
add(K8, D, cut(K8, D, "In general, the committee strives for unanimous consensus before taking an action.", "or to ban someone from a community platform."), [
    ("p", "Does the conduct committee need everyone to agree before acting?", "In general, the committee strives for unanimous consensus before taking an action."),
    ("p", "what kind of outcomes can a conduct report lead to", "For example, we may choose to do nothing, to issue a private warning, to offer coaching, to recommend organizational changes, or to ban someone from a community platform."),
    ("s", "possible conduct sanctions", "For example, we may choose to do nothing, to issue a private warning, to offer coaching, to recommend organizational changes, or to ban someone from a community platform."),
    ("l", "How long does a ban from a community platform last?", "For example, we may choose to do nothing, to issue a private warning, to offer coaching, to recommend organizational changes, or to ban someone from a community platform."),
    ("l", "Can someone appeal a ban issued by the committee?", "For example, we may choose to do nothing, to issue a private warning, to offer coaching, to recommend organizational changes, or to ban someone from a community platform."),
    ("l", "What majority vote does the committee use when consensus fails?", "In general, the committee strives for unanimous consensus before taking an action."),
])

D = "committee-code-of-conduct/election.md"
add(K8, D, cut(K8, D, "* The CoCC consists of 5 members.", "is not eligible to vote."), [
    ("p", "How many people sit on the conduct committee?", "The CoCC consists of 5 members."),
    ("p", "how long is a conduct committee term after the first election", "In all subsequent elections the term will be for 2 years."),
    ("p", "Who gets to vote in the conduct committee election?", "Voting will be done by members of the steering committee."),
    ("p", "If a steering member is also running for the conduct committee, can they still vote?", "A member of the steering committee who is also a nominee for the code of conduct committee is not eligible to vote."),
    ("t", "how many seats are up for electon each year", "In alternating years either 2 or 3 seats will be up for election as terms expire."),
    ("l", "How long is a steering committee term?", "In all subsequent elections the term will be for 2 years."),
    ("l", "Can steering committee members vote by proxy in the conduct committee election?", "Voting will be done by members of the steering committee."),
    ("l", "Is there a limit on how many terms a conduct committee member can serve?", "In all subsequent elections the term will be for 2 years."),
])
add(K8, D, cut(K8, D, "Maximal representation of a single employer is `QUORUM - 1`.", "(typically in Aug)."), [
    ("p", "How many committee members can work for the same company?", "With a five person committee, that limits the number of members employed by the same company to two."),
    ("p", "when are conduct committee elections usually held", "The elections by the steering committee should be held and announced before the previous appointments expire (typically in Aug)."),
    ("p", "Why do only about half the seats come up each year?", "Election cycles are scheduled such that roughly half of the seats come up for re-election each year for purposes of continuity."),
    ("l", "How many steering committee members can work for the same company?", "With a five person committee, that limits the number of members employed by the same company to two."),
    ("l", "When do nominations for the conduct committee open?", "The elections by the steering committee should be held and announced before the previous appointments expire (typically in Aug)."),
    ("l", "What is the quorum for a conduct committee vote?", "Maximal representation of a single employer is `QUORUM - 1`."),
])
add(K8, D, cut(K8, D, "There is no concept of an \"Emeritus Term\" with the CoCC.", "be offered the seat.  This process will continue until the seat is filled."), [
    ("p", "If a committee member resigns, who takes over the seat?", "In the event of a resignation or other loss of an elected committee member, the candidate with the next most votes from the previous election will be offered the seat."),
    ("p", "Do people who leave the conduct committee get an emeritus role?", "There is no concept of an \"Emeritus Term\" with the CoCC."),
    ("p", "once someone leaves the committee do they stay on the mailing lists", "When a member vacates their seat for any reason they will be removed from all conversations, e-mail lists, historical data, and any other activities related to the CoCC."),
    ("s", "committee vacancy replacement", "In the event of a resignation or other loss of an elected committee member, the candidate with the next most votes from the previous election will be offered the seat."),
    ("l", "Who fills a vacant seat on the steering committee?", "In the event of a resignation or other loss of an elected committee member, the candidate with the next most votes from the previous election will be offered the seat."),
    ("l", "How much notice must a member give before resigning from the committee?", "When a member vacates their seat for any reason they will be removed from all conversations, e-mail lists, historical data, and any other activities related to the CoCC."),
    ("l", "Does the replacement member start a fresh two-year term?", "In the event of a resignation or other loss of an elected committee member, the candidate with the next most votes from the previous election will be offered the seat."),
])

D = "communication/slack-guidelines.md"
add(K8, D, cut(K8, D, "To join the Kubernetes Slack, you must use the [community inviter].", "Instead, direct them to the [community inviter]."), [
    ("p", "How do I get into the project's chat workspace?", "To join the Kubernetes Slack, you must use the [community inviter]."),
    ("p", "can i just send my coworker an invite from inside slack", "Please do not send in-Slack Invitations to your coworkers or friends."),
    ("s", "join slack how", "To join the Kubernetes Slack, you must use the [community inviter]."),
    ("l", "How do I get a Slack account removed when I leave the project?", "To join the Kubernetes Slack, you must use the [community inviter]."),
    ("l", "Can guests join Slack with a single-channel guest account?", "No other method of joining Kubernetes Slack will work."),
])
add(K8, D, cut(K8, D, "Doing any of the below is prohibited.", "is considered spam and prohibited."), [
    ("p", "Can I hook a chatbot or AI agent up to the community Slack?", "**No Automated Access**: Kubernetes Slack is for contributors to connect with other contributors. Connecting any automated program or service to Kubernetes Slack without explicit approval by the Slack Administrators or K8s-Infra is strictly prohibited. This includes, but is not limited to, app plugins, AI agents, chat bots, social media management platforms, backup tools, and screen scrapers."),
    ("p", "is it ok to message someone privately out of the blue", "**Unsolicited Direct Messages**: Do not send a direct message (DM) to any user who has not invited it, and that you are not approaching in their official role in the Kubernetes project. In general, ask questions in public channels."),
    ("p", "Where should conversations about my employer's internal matters happen?", "**Company Business**: Proprietary conversations should occur in your company Slack and/or communication platforms."),
    ("t", "can i post a link to my podcast or linkedin in slack", "**Self-Promotion**: users posting about their blogs, podcasts, LinkedIn profiles, non-Kubernetes projects, or other personal content in order to drive traffic is considered spam and prohibited."),
    ("l", "How long does it take to get a Slack bot approved?", "**No Automated Access**: Kubernetes Slack is for contributors to connect with other contributors. Connecting any automated program or service to Kubernetes Slack without explicit approval by the Slack Administrators or K8s-Infra is strictly prohibited. This includes, but is not limited to, app plugins, AI agents, chat bots, social media management platforms, backup tools, and screen scrapers."),
    ("l", "How long are Slack direct messages kept before they are deleted?", "**Self-Promotion**: users posting about their blogs, podcasts, LinkedIn profiles, non-Kubernetes projects, or other personal content in order to drive traffic is considered spam and prohibited."),
    ("l", "How many warnings does someone get before their Slack account is deactivated?", "**Unsolicited Direct Messages**: Do not send a direct message (DM) to any user who has not invited it, and that you are not approaching in their official role in the Kubernetes project. In general, ask questions in public channels."),
])
add(K8, D, cut(K8, D, "Several types of posts are restricted to specific Slack channels", "nonprofit community events."), [
    ("p", "Where am I allowed to post a survey?", "**Surveys**: surveys, focus groups, free trials, and similar calls for participation may only be posted on the #surveys channel.  However, an official Kubernetes community survey can be posted anywhere."),
    ("p", "which channel do job ads go in", "**Jobs and Resumes** belong on the `#kubernetes-careers` channel and should not be posted elsewhere."),
    ("p", "Can an official community survey be shared outside the surveys channel?", "**Surveys**: surveys, focus groups, free trials, and similar calls for participation may only be posted on the #surveys channel.  However, an official Kubernetes community survey can be posted anywhere."),
    ("p", "What happens if I post restricted content in the wrong channel?", "Several types of posts are restricted to specific Slack channels, and posting this content elsewhere is a violation that can result in a warning, restrictions on posting, or deactivation of your account."),
    ("s", "where to announce a meetup", "**Events** may only be posted to channels where that specific event is applicable, or the `#events` channel.  In general, this should be only nonprofit community events."),
    ("l", "Which channel is used for release announcements?", "**Jobs and Resumes** belong on the `#kubernetes-careers` channel and should not be posted elsewhere."),
    ("l", "Who moderates the #events channel?", "**Events** may only be posted to channels where that specific event is applicable, or the `#events` channel.  In general, this should be only nonprofit community events."),
    ("l", "How many surveys can one person post per month?", "**Surveys**: surveys, focus groups, free trials, and similar calls for participation may only be posted on the #surveys channel.  However, an official Kubernetes community survey can be posted anywhere."),
])
add(K8, D, cut(K8, D, "Job opening submissions require a direct corporate portal", "reach out in `#slack-admins` for a status update."), [
    ("p", "Can I post a job using my gmail address?", "Job opening submissions require a direct corporate portal, official ATS, or accessible portfolio URL; a matching corporate domain email (public domains such as @gmail.com will be rejected); explicit geographic constraints for `Hybrid` or `On-site` roles and direct, unshortened resume links."),
    ("p", "are bit.ly style short links allowed in job posts", "Third-party URL shorteners are not permitted."),
    ("p", "My job post still hasn't shown up. How long should I wait before asking?", "If your post does not appear within 48 hours reach out in `#slack-admins` for a status update."),
    ("p", "Will a crypto-related job listing be accepted?", "Job posting will be rejected for missing, broken, or permission-locked links; mismatched business email domains; anonymous or unverified recruitment agency postings; or any content related to cryptocurrency, investment schemes, or unrelated topics."),
    ("t", "do remote roles need to list a locaton", "Job opening submissions require a direct corporate portal, official ATS, or accessible portfolio URL; a matching corporate domain email (public domains such as @gmail.com will be rejected); explicit geographic constraints for `Hybrid` or `On-site` roles and direct, unshortened resume links."),
    ("l", "How long does a job post stay visible in the channel?", "If your post does not appear within 48 hours reach out in `#slack-admins` for a status update."),
    ("l", "Is there a fee for posting a job in the careers channel?", "Job opening submissions require a direct corporate portal, official ATS, or accessible portfolio URL; a matching corporate domain email (public domains such as @gmail.com will be rejected); explicit geographic constraints for `Hybrid` or `On-site` roles and direct, unshortened resume links."),
    ("l", "Within how many hours are resume submissions reviewed?", "If your post does not appear within 48 hours reach out in `#slack-admins` for a status update."),
])
add(K8, D, cut(K8, D, "The Kubernetes Slack has an integrated tool for reporting issues.", "they may take action without reporting back to you."), [
    ("p", "How do I flag an abusive message in Slack?", "It may be accessed by clicking on \"More actions\", the \"**...**\" to the right of a message, selecting \"connect to apps\", and selecting **Report message**."),
    ("p", "who sees it when i report a message", "When done, it will send the reported message and your comments to **BOTH** the [Slack admins][admins] and [Code of Conduct Committee (CoCC)][cocc]."),
    ("p", "Can I report a Slack message without revealing who I am?", "You may report anonymously."),
    ("p", "Will the admins always get back to me after I report something?", "Due to report volume, if the Slack admins do not require additional information they may take action without reporting back to you."),
    ("l", "How do I report an abusive comment on a GitHub pull request?", "The Kubernetes Slack has an integrated tool for reporting issues."),
    ("l", "How long do Slack admins keep reported messages?", "When done, it will send the reported message and your comments to **BOTH** the [Slack admins][admins] and [Code of Conduct Committee (CoCC)][cocc]."),
    ("l", "Can I report a message anonymously to the GitHub admins?", "You may report anonymously."),
])
add(K8, D, cut(K8, D, "We offer private channels on the Kubernetes Slack extremely sparingly.", "team."), [
    ("p", "Can my group get a private Slack channel?", "We offer private channels on the Kubernetes Slack extremely sparingly."),
    ("p", "what kinds of private channels are currently supported", "The only private channels we currently support involve community-owned software security or community moderation in some way."),
    ("p", "Does a private channel need a Slack admin in it?", "Most private channels will be required to include a member of the Slack Admins team."),
    ("l", "How many members can a private channel have?", "Most private channels will be required to include a member of the Slack Admins team."),
    ("l", "How long does approval of a private channel request take?", "Unless supported by a Kubernetes SIG or the Steering Committee, requests for a private channel will be treated with skepticism."),
])
add(K8, D, cut(K8, D, "-   Add the channel to 'channels.yaml' following the [Channel Documentation]", "Channels must not share the same name with a Slack user or user group."), [
    ("p", "Can a channel be named the same as an existing user group?", "Channels must not share the same name with a Slack user or user group."),
    ("p", "How long can a new channel name be?", "Channel names must be 21 characters or less in length, limited by Slack design."),
    ("p", "where do i add a new channel", "Add the channel to 'channels.yaml' following the [Channel Documentation]"),
    ("s", "channel name max length", "Channel names must be 21 characters or less in length, limited by Slack design."),
    ("l", "How long can a Slack user group name be?", "Channel names must be 21 characters or less in length, limited by Slack design."),
    ("l", "Can channel names contain uppercase letters?", "Channel names must be 21 characters or less in length, limited by Slack design."),
])

D = "communication/zoom-guidelines.md"
add(K8, D, cut(K8, D, "To create a meeting with **moderation** enabled, ensure the following:", "Set the password to the meeting to \"77777\""), [
    ("p", "What passcode should our community video call use?", "Set the password to the meeting to \"77777\""),
    ("p", "can i just use my personal meeting id for the sig call", "Configure a meeting setup through the \"Meeting\" menu in the leads Zoom account. **NOTE:** Do **NOT** use the \"Personal Meeting ID\". This will create an \"ad-hoc\" meeting that is time-bounded and without moderation capability."),
    ("p", "I'm not logged into the leads account. How can I still take over as host?", "Be logged in as the leads account associated with the meeting **OR** use the [host key] to \"claim host\"."),
    ("s", "meeting password", "Set the password to the meeting to \"77777\""),
    ("l", "What's the password for the leads Zoom account itself?", "Set the password to the meeting to \"77777\""),
    ("l", "Which Zoom client version is the minimum supported?", "Have the [latest version] of the Zoom client installed."),
    ("l", "How long can an ad-hoc personal meeting run before it ends?", "Configure a meeting setup through the \"Meeting\" menu in the leads Zoom account. **NOTE:** Do **NOT** use the \"Personal Meeting ID\". This will create an \"ad-hoc\" meeting that is time-bounded and without moderation capability."),
])
add(K8, D, cut(K8, D, "If you're dealing with a troll or bad actor:", "contact the [Zoom Admins] to report the issue."), [
    ("p", "Someone is disrupting our video call. What's the first thing to do?", "Put the troll or bad actor on **hold**. The participant will be put into a [waiting room] and will not be able to participate in the call until the host removes the hold."),
    ("p", "if i remove someone from the call can they rejoin later", "They will never be able to come back into that meeting ID on that particular device."),
    ("p", "After kicking someone out, how do I stop others from barging in?", "After an action has been taken, use the **lock meeting** feature so that no one else can come into the meeting."),
    ("t", "what if locking the meeting dosnt work", "If that fails, end the call immediately, and contact the [Zoom Admins] to report the issue."),
    ("l", "Can a removed participant rejoin from a different device?", "They will never be able to come back into that meeting ID on that particular device."),
    ("l", "Who can un-remove a participant who was removed by mistake?", "Remove the participant. Please be cautious when testing or using this feature, as it is **permanent**."),
    ("l", "How do I report a troll to the Slack admins?", "If that fails, end the call immediately, and contact the [Zoom Admins] to report the issue."),
])
add(K8, D, cut(K8, D, "Any AI notetaker bots (such as Otter.ai, Fireflies.ai, Fathom, or Read.ai)", "to ensure they have the necessary administrative controls."), [
    ("p", "Can I bring an AI note-taking assistant into a community call?", "Any AI notetaker bots (such as Otter.ai, Fireflies.ai, Fathom, or Read.ai) are not permitted on Kubernetes Zoom calls."),
    ("p", "why aren't transcription bots allowed", "Unauthorized third-party recording poses risks around consent, privacy, and moderation."),
    ("p", "As the host, what do I do if a bot joins?", "**If you are hosting**: You should remove any AI bot participants immediately."),
    ("p", "nobody is hosting the meeting, how do i get admin controls", "**If a meeting is hostless**: The person running the session should request the host key from their group's leaders beforehand to ensure they have the necessary administrative controls."),
    ("l", "Is Zoom's own built-in recording allowed on community calls?", "Unauthorized third-party recording poses risks around consent, privacy, and moderation."),
    ("l", "Are AI notetakers permitted in Slack huddles?", "Any AI notetaker bots (such as Otter.ai, Fireflies.ai, Fathom, or Read.ai) are not permitted on Kubernetes Zoom calls."),
    ("l", "Where are the host keys stored?", "**If a meeting is hostless**: The person running the session should request the host key from their group's leaders beforehand to ensure they have the necessary administrative controls."),
])

D = "github-management/org-owners-guide.md"
add(K8, D, cut(K8, D, "The [GitHub Administration Team] will aim to handle requests in the following", "associated issue for assistance."), [
    ("p", "How fast will I get an org invite once all my +1s are in?", "Organization invites should be handled within one week of all requirements for membership being met (all +1s obtained)."),
    ("p", "how long until someone responds to a new repo request", "Repository creation or migration requests should be responded to within 72 hours of the issue being opened."),
    ("p", "What's the turnaround for security or moderation requests?", "Security or moderation requests should be handled ASAP, and coverage should be provided in multiple time zones and countries."),
    ("p", "My request is taking longer than the stated time. How do I escalate?", "If a request is taking longer than the above time frames, or there is a need to escalate an urgent request, please mention **[@kubernetes/owners]** on the associated issue for assistance."),
    ("s", "repo creation SLO", "Repository creation or migration requests should be responded to within 72 hours of the issue being opened."),
    ("t", "reponse time for other github requests", "All other requests should be responded to within a week of the issue being opened."),
    ("l", "How long does it take to archive a repository?", "Repository creation or migration requests should be responded to within 72 hours of the issue being opened."),
    ("l", "What is the response time for Slack channel requests?", "All other requests should be responded to within a week of the issue being opened."),
    ("l", "How fast are org invites handled before all sponsors have given +1?", "Organization invites should be handled within one week of all requirements for membership being met (all +1s obtained)."),
])
add(K8, D, cut(K8, D, "Kubernetes managed organizations should be in the form of `kubernetes-[thing]`.", "managed by the Kubernetes project or use a different name."), [
    ("p", "What naming pattern should a new project org follow?", "Kubernetes managed organizations should be in the form of `kubernetes-[thing]`."),
    ("p", "who approves creating a new github org", "Prior to creating an organization please contact the steering committee for direction and approval."),
    ("p", "Who owns the trademark on the project name?", "Note: The CNCF, as part of the Linux Foundation, holds the trademark on the Kubernetes name."),
    ("l", "What naming pattern should new repositories inside an org follow?", "Kubernetes managed organizations should be in the form of `kubernetes-[thing]`."),
    ("l", "Who approves archiving a GitHub organization?", "Prior to creating an organization please contact the steering committee for direction and approval."),
    ("l", "Who owns the trademark on the Helm name?", "Note: The CNCF, as part of the Linux Foundation, holds the trademark on the Kubernetes name."),
])

D = "github-management/github-actions-policy.md"
add(K8, D, cut(K8, D, "1. All `uses:` statements in workflow files MUST reference", "automatically update SHA-pinned actions to newer versions"), [
    ("p", "How do workflow files have to reference third-party actions?", "All `uses:` statements in workflow files MUST reference actions using 40-character commit SHA hashes"),
    ("p", "do existing workflows also have to be fixed or only new ones", "Existing workflows MUST be updated to comply"),
    ("p", "Is a bot recommended for bumping pinned actions?", "Repositories SHOULD enable Dependabot for GitHub Actions to automatically update SHA-pinned actions to newer versions"),
    ("s", "new workflow compliance timing", "New workflows MUST comply before merge"),
    ("l", "By what date must existing workflows be updated?", "Existing workflows MUST be updated to comply"),
    ("l", "Do container images in workflows have to be pinned by digest?", "All `uses:` statements in workflow files MUST reference actions using 40-character commit SHA hashes"),
    ("l", "Is Renovate required for updating pinned actions?", "Repositories SHOULD enable Dependabot for GitHub Actions to automatically update SHA-pinned actions to newer versions"),
])
add(K8, D, cut(K8, D, "Mutable references such as `latest`, tags, branches", "preventing such attacks."), [
    ("p", "Why is referencing an action by tag or branch considered risky?", "Mutable references such as `latest`, tags, branches (like `master`, `main`), can be force-updated to point to different commits."),
    ("p", "what makes pinning to a commit hash safer", "Commit SHA hashes are cryptographically immutable and cannot be changed, preventing such attacks."),
    ("p", "How could an attacker abuse a mutable action reference?", "An attacker who compromises an action's repository can inject malicious code by modifying what these references point to, creating supply chain vulnerabilities."),
    ("l", "Why is pinning npm packages to exact versions required?", "Commit SHA hashes are cryptographically immutable and cannot be changed, preventing such attacks."),
    ("l", "How often should pinned commit hashes be rotated?", "Commit SHA hashes are cryptographically immutable and cannot be changed, preventing such attacks."),
])

D = "github-management/ai-code-review-tools.md"
add(K8, D, cut(K8, D, "- The pilot runs for a 90-day evaluation period starting from the date the", "contributors and reviewers during the pilot"), [
    ("p", "How long does a trial of an AI review bot last?", "The pilot runs for a 90-day evaluation period starting from the date the tool is enabled"),
    ("p", "is the ai review tool turned on for the whole org during the trial", "The tool is enabled only on the specific requested repositories, not org-wide"),
    ("p", "Who collects opinions from contributors during the trial run?", "The sponsoring subproject is responsible for collecting feedback from contributors and reviewers during the pilot"),
    ("p", "Can a repo change the tool's settings during the pilot?", "An org-wide default configuration is applied; repositories may customize within those bounds"),
    ("l", "How long does a pilot of an AI code generation assistant last?", "The pilot runs for a 90-day evaluation period starting from the date the tool is enabled"),
    ("l", "Who pays for the AI review tool during the pilot?", "The sponsoring subproject is responsible for collecting feedback from contributors and reviewers during the pilot"),
    ("l", "Can the pilot be extended beyond its evaluation period?", "The pilot runs for a 90-day evaluation period starting from the date the tool is enabled"),
])
add(K8, D, cut(K8, D, "A subproject lead or an approver listed in the repository's top-level [OWNERS]", "List the GitHub permissions and OAuth scopes the tool requests"), [
    ("p", "Who is allowed to ask for a new AI review tool?", "A subproject lead or an approver listed in the repository's top-level [OWNERS] file files an issue on [kubernetes/org]."),
    ("p", "does my request need a link to the tool's docs", "Identify the tool and link to its documentation"),
    ("p", "Do I need to explain why the already-approved tools aren't good enough?", "Explain why existing approved tools do not meet their needs"),
    ("t", "do i need to list the oauth scopes the bot wants", "List the GitHub permissions and OAuth scopes the tool requests"),
    ("l", "Who approves the privacy assessment for a new AI review tool?", "A subproject lead or an approver listed in the repository's top-level [OWNERS] file files an issue on [kubernetes/org]."),
    ("l", "Where do I request a new CI/CD tool?", "A subproject lead or an approver listed in the repository's top-level [OWNERS] file files an issue on [kubernetes/org]."),
    ("l", "How many repositories can be included in one pilot request?", "List the specific repositories for the pilot"),
])

D = "contributors/guide/issue-triage.md"
add(K8, D, table(K8, D, "|Priority label|", 5), [
    ("tb", "Which priority label means drop everything and fix it now?", "Priority label: `priority/critical-urgent`; What it means: Team leaders are responsible for making sure that these issues (in their area) are being actively worked on—i.e., drop what you're doing. Stuff is burning. These should be fixed before the next release.; Examples: user-visible bugs in core features <br> broken builds <br> tests and critical security issues"),
    ("tb", "does important-soon block a release", "Priority label: `priority/important-soon`; What it means: Must be staffed and worked on either currently or very soon—ideally in time for the next release. Important, but wouldn't block a release.; Examples: [**XXXX**]"),
    ("tb", "What label do I use for a nice-to-have that nobody has time for?", "Priority label: `priority/backlog`; What it means: General agreement that this is a nice-to-have, but no one's available to work on it anytime soon. Community contributions would be most welcome in the meantime, though it might take a while to get them reviewed if reviewers are fully occupied with higher-priority issues—for example, immediately before a release.; Examples: [**XXXX**]"),
    ("tb", "priority for a broken build?", "Priority label: `priority/critical-urgent`; What it means: Team leaders are responsible for making sure that these issues (in their area) are being actively worked on—i.e., drop what you're doing. Stuff is burning. These should be fixed before the next release.; Examples: user-visible bugs in core features <br> broken builds <br> tests and critical security issues"),
    ("tb", "what's the awaiting-more-evidence label for", "Priority label: `priority/awaiting-more-evidence`; What it means: Possibly useful, but not yet enough support to actually get it done.; Examples: Mostly placeholders for potentially good ideas, so that they don't get completely forgotten, and can be referenced or deduped every time they come up"),
    ("tb", "Which priority covers important work that may take several releases?", "Priority label: `priority/important-longterm`; What it means: Important over the long term, but may not be currently staffed and/or may require multiple releases to complete. Wouldn't block a release.; Examples: [**XXXX**]"),
    ("l", "Who is allowed to set the critical-urgent label?", "Priority label: `priority/critical-urgent`; What it means: Team leaders are responsible for making sure that these issues (in their area) are being actively worked on—i.e., drop what you're doing. Stuff is burning. These should be fixed before the next release.; Examples: user-visible bugs in core features <br> broken builds <br> tests and critical security issues"),
    ("l", "What response time in hours does a critical-urgent issue get?", "Priority label: `priority/critical-urgent`; What it means: Team leaders are responsible for making sure that these issues (in their area) are being actively worked on—i.e., drop what you're doing. Stuff is burning. These should be fixed before the next release.; Examples: user-visible bugs in core features <br> broken builds <br> tests and critical security issues"),
    ("l", "What does the priority/low label mean?", "Priority label: `priority/backlog`; What it means: General agreement that this is a nice-to-have, but no one's available to work on it anytime soon. Community contributions would be most welcome in the meantime, though it might take a while to get them reviewed if reviewers are fully occupied with higher-priority issues—for example, immediately before a release.; Examples: [**XXXX**]"),
])

D = "committee-code-of-conduct/transparency-reports/2022-h1.md"
add(K8, D, table(K8, D, "| Received Via |", 5), [
    ("tb", "How many conduct reports came in through the Slack admins in that period?", "Received Via: Slack admins; This Period: 61; Delta vs Prior Period: +5"),
    ("tb", "reports received by email to conduct@ this period", "Received Via: conduct@kubernetes.org; This Period: 3; Delta vs Prior Period: -5"),
    ("tb", "Did reports from Linux Foundation event staff go up or down compared to the previous period?", "Received Via: Linux Foundation event staff; This Period: 5; Delta vs Prior Period: +4"),
    ("tb", "change in slack admin reports vs last period?", "Received Via: Slack admins; This Period: 61; Delta vs Prior Period: +5"),
    ("l", "How many punitive actions did the Slack admins take in that period?", "Received Via: Slack admins; This Period: 61; Delta vs Prior Period: +5"),
    ("l", "How many of the Slack admin reports ended in a ban?", "Received Via: conduct@kubernetes.org; This Period: 3; Delta vs Prior Period: -5"),
    ("l", "How many reports did the Zoom admins receive?", "Received Via: Other avenues; This Period: N/A; Delta vs Prior Period: N/A"),
])

# ---------------------------------------------------------------- off-topic pool
OFFTOPIC = [
    "How many vacation days do new hires get in their first year?",
    "What is the mileage reimbursement rate for using my own car?",
    "when does open enrollment for health insurance start",
    "How do I update my bank details for payroll?",
    "Can I carry over unused PTO into next year?",
    "What is the per diem for meals on a business trip to London?",
    "how do i book a meeting room on the third floor",
    "Who approves purchase orders over $10,000?",
    "Is there a parking allowance for employees at the downtown office?",
    "What's the process for requesting parental leave?",
    "how much does the company match on 401k contributions",
    "Where can I find my W-2 form?",
    "Do we reimburse gym memberships?",
    "How do I reset my expense report approver?",
    "what is the dress code for client visits",
    "How far in advance do I need to book flights for them to be reimbursed?",
    "Can contractors use the company cafeteria?",
    "What is the notice period if I want to resign?",
    "How do I order a second monitor for my home office?",
    "Are we closed on the day after Thanksgiving?",
    "who do i contact about a payroll error",
    "What hotel chains are on the preferred travel list?",
    "How long does it take to get reimbursed for expenses?",
    "Is business class allowed on flights over eight hours?",
    "How do I enroll a new dependent in dental coverage?",
    "what is the referral bonus for recommending a candidate",
    "Can I work from another country for a month?",
    "When are annual performance reviews due?",
    "How do I get a replacement badge for the office?",
    "What is the budget for a team offsite dinner per person?",
    "Does the company pay for professional certifications?",
    "how many sick days are we allowed per year",
    "What's the procedure for returning a laptop when leaving the company?",
    "Who handles visa sponsorship for new hires?",
    "How do I submit a timesheet for overtime hours?",
    "Can I expense a home internet connection?",
    "What is the standard payment term on supplier invoices?",
    "how do i add a new vendor to the procurement system",
    "When is the quarterly bonus paid out?",
    "Are pets allowed in the office on Fridays?",
    "What is the minimum notice for booking the company car?",
    "How do I request a standing desk?",
    "what's the tuition reimbursement limit per year",
    "Who signs customer NDAs on behalf of the company?",
    "How do I change my emergency contact details?",
    "Is there a shuttle from the train station to the campus?",
    "What is our policy on accepting gifts from suppliers?",
    "How many days a week are we expected in the office?",
    "Can I cash out unused vacation when I leave?",
    "what is the cutoff date for submitting december expenses",
    "Who do I ask for a salary verification letter for my mortgage?",
    "How do I claim the wellness stipend?",
    "What is the maximum hotel rate in New York?",
    "Does the company offer commuter benefits?",
    "how do i get access to the finance reporting dashboard",
    "What are the office hours for the mailroom?",
    "Can I bring my child to work during school holidays?",
    "Who approves requests for unpaid leave?",
    "What happens to my stock options if I leave?",
    "how long is the probation period for new employees",
    "Where do I send invoices for freelance translators?",
    "What is the process for reporting a broken chair or desk?",
    "Do we have a corporate discount for mobile phone plans?",
    "How are jury duty absences handled?",
    "what's the company's fiscal year end",
    "Can I use my corporate card for personal purchases and pay it back?",
    "How do I request a new email distribution list for marketing?",
    "Who is the contact for the annual sales kickoff venue?",
    "What is the bereavement leave allowance?",
    "how do i reserve a desk in the hot-desking area",
    "Do interns get paid holidays?",
    "What's the approval chain for hiring a new headcount?",
    "How much is the daily allowance for meals in Tokyo?",
    "Is there a company policy on side jobs or moonlighting?",
    "when will the new health plan premiums take effect",
    "How do I get my printer access restored?",
    "What is the lunch break length for hourly staff?",
    "Can I donate my unused leave days to a colleague?",
    "Who do I talk to about a discount for the customer conference tickets?",
    "how do i file a claim for a lost bag on a business trip",
    "What's the deadline for submitting the annual compliance training?",
    "Do we reimburse taxis after working late?",
    "How many weeks of sabbatical do long-serving employees get?",
    "What's the process to rent extra storage at the warehouse?",
    "is the office open on public holidays",
    "How do I get a company credit card?",
    "What is the budget for employee recognition awards?",
    "Who approves marketing spend on trade show booths?",
    "How long do we keep paper invoices in the archive?",
    "what's the policy on alcohol at company events",
    "Can I choose between a Mac and a Windows laptop?",
    "How do I nominate a colleague for the quarterly award?",
]

# ---------------------------------------------------------------- assemble
# Written but left out to keep the set near 60 passages / 450 rows.
DROP = (
    "If you previously had fairly lax code reviews",
    "Tags are manually entered labels",
    "If you see some major design problems",
    "-   Add the channel to 'channels.yaml'",
    "To join the Kubernetes Slack",
    "Kubernetes managed organizations should be in the form",
    "Mutable references such as",
    "There are no hard boundaries of the community",
)
KIND = {"p": "paraphrase", "s": "short", "t": "typo", "tb": "table", "l": "lookalike"}


def select(idx, rows):
    ans = [r for r in rows if r[0] != "l"]
    lk = [r for r in rows if r[0] == "l"]
    if any(r[0] == "tb" for r in rows):
        keep_ans = ans[:6]
    else:
        st = [r for r in ans if r[0] in ("s", "t")]
        cap = 3 + (1 if len(st) >= 2 else 0)
        p = [r for r in ans if r[0] == "p"][: max(cap - len(st), 2)]
        keep = {id(r) for r in st + p}
        keep_ans = [r for r in ans if id(r) in keep]
    keep_lk = lk[: (3 if idx % 3 != 2 else 2)]
    keep = {id(r) for r in keep_ans + keep_lk}
    return [r for r in rows if id(r) in keep]


def build():
    out = []
    passages = [x for x in P if not x[2].lstrip().startswith(DROP)]
    off = iter(OFFTOPIC)
    n_off_two = len(OFFTOPIC) - len(passages)  # this many passages, spread evenly, get two off-topic rows
    for idx, (corpus, doc, passage, rows) in enumerate(passages):
        chosen = select(idx, rows)
        n_off = 2 if (idx * n_off_two) % len(passages) < n_off_two else 1
        chosen += [("o", next(off), None) for _ in range(n_off)]
        for kind, q, hint in chosen:
            label = 0 if kind in ("l", "o") else 1
            out.append({
                "id": None, "corpus": corpus, "doc": doc, "passage": passage,
                "question": q, "label": label,
                "kind": KIND.get(kind, "offtopic"),
                "answer_sentence": None if hint is None else locate(passage, hint),
            })
    for k, r in enumerate(out, 1):
        r["id"] = f"tsb-{k:04d}"
    return passages, out


if __name__ == "__main__":
    passages, out = build()
    dest = Path(__file__).with_name("triples-b.jsonl")
    with dest.open("w", encoding="utf-8") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(passages)} passages, {len(out)} rows -> {dest}")
