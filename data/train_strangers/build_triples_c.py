"""Build data/train_strangers/triples-c.jsonl from two CC0 / CC-BY-4.0 handbooks.

Usage: python3 build_triples_c.py CLEF_GIT_DIR CIVICACTIONS_GIT_DIR
Passages are cut from `git show <commit>:<path>` (exact text); answer sentences
are located in the passage by a prefix (or 'start||end') and extended to the
sentence / list-item boundary.
"""
import json, re, subprocess, sys
from pathlib import Path

CLEF_COMMIT = "a9a576eb7362d76a5435de69b83bdb650bd86e90"
CA_COMMIT = "cf959508c8c4d3a039a5cc320013713fec7a415c"

def show(gitdir, commit, path):
    return subprocess.run(["git", "--git-dir", gitdir, "show", f"{commit}:{path}"],
                          capture_output=True, check=True).stdout.decode("utf-8")

def cut(text, start, end):
    assert text.count(start) >= 1, start
    i = text.index(start)
    j = text.index(end, i) + len(end)
    return text[i:j]

def sentence(passage, spec):
    if "||" in spec:
        a, b = spec.split("||")
        i = passage.index(a)
        return passage[i:passage.index(b, i) + len(b)]
    assert spec in passage, spec
    i = passage.index(spec)
    # back to sentence start
    k = 0
    for m in re.finditer(r"[.!?]\s+|\n", passage[:i]):
        k = m.end()
    line = passage[k:i]
    m = re.match(r"\s*(?:[*-] |\d+\. )", passage[k:])
    if m and m.end() <= i - k + len(spec):
        k += m.end()
    m = re.search(r"[.!?](?=\s|$)|\n|$", passage[i + len(spec) - 1:])
    j = i + len(spec) - 1 + m.start()
    if m.group(0) in ".!?":
        j += 1
    return passage[k:j].rstrip()

P = []  # (corpus, doc, passage, [(kind, question, spec)])

def add(corpus, doc, passage, qs):
    P.append((corpus, doc, passage, qs))

def main():
    clef, ca = sys.argv[1], sys.argv[2]
    C = lambda p: show(clef, CLEF_COMMIT, p)
    A = lambda p: show(ca, CA_COMMIT, p)
    cc, ac = "clef-handbook", "civicactions-guidebook"

    d = "Benefits and Perks/Vacation and Sick Leave.md"; t = C(d)
    add(cc, d, cut(t, "Taking time off and recharging", "more than 5 days of sick leave."), [
        ("paraphrase", "How many paid vacation days do I get each year?", "Taking time off"),
        ("paraphrase", "how far ahead do i need to put my vacation on the team calendar", "Employees should schedule"),
        ("short", "sick leave cap?", "Employees also accrue"),
        ("typo", "how many sick days can i acumulate max", "Employees also accrue"),
        ("paraphrase", "How fast do I earn paid time off each month?", "Taking time off"),
        ("lookalike", "Can unused vacation days be carried over into next year?", "Taking time off"),
        ("lookalike", "Do part-time staff get the same 15 days of vacation?", "Taking time off"),
        ("lookalike", "Is a doctor's note needed after 5 days of sick leave?", "Employees also accrue"),
        ("offtopic", "Who do I contact to get a new building access badge?", None),
    ])
    add(cc, d, cut(t, "Employees should report vacation and sick days", "disability leave and/or other support."), [
        ("paraphrase", "Who do I tell when I take a sick day?", "Employees should report"),
        ("paraphrase", "Where can I see how many days off I've built up?", "Employees should report"),
        ("paraphrase", "I have a long-term illness, who should I talk to about working from home or flexible hours?", "Employees with chronic"),
        ("short", "reporting sick days", "Employees should report"),
        ("lookalike", "Who approves vacation requests when the founder is on leave?", "Employees should report"),
        ("lookalike", "How many days of disability leave can someone with a chronic illness take?", "Employees with chronic"),
        ("lookalike", "Which payroll system do we use to track time off?", "Employees should report"),
        ("offtopic", "What's the dress code for client meetings?", None),
    ])
    d = "Benefits and Perks/New Parent Leave.md"; t = C(d)
    add(cc, d, cut(t, "Clef offers 12 weeks of paid leave", "the easier it will be to handle."), [
        ("paraphrase", "How long is paid parental leave?", "Clef offers 12 weeks"),
        ("paraphrase", "Do fathers get the same baby leave as mothers?", "Clef offers 12 weeks"),
        ("paraphrase", "We're adopting a child, am I entitled to paid time off?", "Clef offers 12 weeks"),
        ("paraphrase", "Is there a deadline for using my parental leave after the baby arrives?", "The leave should be taken"),
        ("paraphrase", "how much notice do i have to give before going on parental leave", "Employees should give the rest"),
        ("lookalike", "Can the 12 weeks of parental leave be split into several blocks?", "The leave should be taken"),
        ("lookalike", "How many weeks of leave do foster parents get?", "Clef offers 12 weeks"),
        ("lookalike", "Do part-time employees get 12 weeks of paid parental leave?", "Clef offers 12 weeks"),
        ("offtopic", "How do I reset my VPN password?", None),
        ("offtopic", "Which airline do we use for domestic business flights?", None),
    ])
    add(cc, d, cut(t, "Paid time off of any kind, including New Parent Leave", "before they were eligible for their sabbatical."), [
        ("paraphrase", "Do I keep earning vacation days while I'm on parental leave?", "Paid time off of any kind"),
        ("paraphrase", "does parental leave count towards my sabbatical time", "Paid time off of any kind"),
        ("paraphrase", "If I take baby leave in my fifth year, does it push back my sabbatical?", "If they took 12 weeks"),
        ("lookalike", "Do I keep receiving health insurance while on parental leave?", "Paid time off of any kind"),
        ("lookalike", "Can I take parental leave and my sabbatical back to back?", "If they took 12 weeks"),
        ("lookalike", "Does unpaid leave stop vacation accrual too?", "Paid time off of any kind"),
        ("offtopic", "What is the company's policy on bringing dogs to the office?", None),
    ])
    add(cc, d, cut(t, "In California, State Disability Insurance", "paying the full salary on top of them."), [
        ("paraphrase", "Will the company top up state disability pay so my salary stays the same?", "It is illegal for an employer"),
        ("paraphrase", "Can I get my full salary from the company plus state family leave payments at the same time?", "It is illegal for an employer"),
        ("paraphrase", "which state programs pay part of my wages when I can't work after giving birth", "In California, State"),
        ("lookalike", "What percentage of my salary does California State Disability Insurance pay?", "In California, State"),
        ("lookalike", "How do employees outside California get their salary topped up during pregnancy leave?", "In California, State"),
        ("lookalike", "How do I apply for Paid Family Leave in California?", "In California, State"),
        ("offtopic", "Where can I find last quarter's sales figures?", None),
    ])
    d = "Benefits and Perks/Sabbatical.md"; t = C(d)
    add(cc, d, cut(t, "After every 5 years of working at Clef", "or something else altogether."), [
        ("paraphrase", "How long do I have to work here before I can take a sabbatical?", "After every 5 years"),
        ("paraphrase", "Is the sabbatical paid?", "After every 5 years"),
        ("short", "sabbatical length", "After every 5 years"),
        ("paraphrase", "Can I volunteer at a nonprofit during my sabbatical?", "This could be researching"),
        ("lookalike", "Does the company pay travel costs for sabbatical projects?", "During this sabbatical"),
        ("lookalike", "Who has to approve my sabbatical project?", "During this sabbatical"),
        ("lookalike", "How long is the sabbatical for contractors?", "After every 5 years"),
        ("offtopic", "How do I submit a purchase order for new software?", None),
    ])
    add(cc, d, cut(t, "To make sure that sabbatical is not overly disruptive", "We may set some policy to enforce this later."), [
        ("paraphrase", "How much notice do I need to give before my sabbatical?", "They should also notify"),
        ("paraphrase", "I took 3 months of leave last year, can I still take my sabbatical?", "To make sure that sabbatical"),
        ("paraphrase", "can i quit right after my sabbatical ends", "There is an expectation"),
        ("typo", "sabatical notice period", "They should also notify"),
        ("lookalike", "Do I have to pay back my sabbatical salary if I resign afterwards?", "We may set some policy"),
        ("lookalike", "How many weeks' notice are required before parental leave?", "They should also notify"),
        ("lookalike", "How soon after coming back from sabbatical can I take vacation?", "To make sure that sabbatical"),
        ("offtopic", "What's the process for booking a meeting room?", None),
    ])
    d = "Employment Policies/Working Remotely.md"; t = C(d)
    add(cc, d, cut(t, "You need your manager's approval before you can work remotely", "the manager can and should veto the option."), [
        ("paraphrase", "Who has to sign off if I want to work from my parents' house for two weeks?", "You need your manager's approval"),
        ("paraphrase", "How early should I ask before booking flights for a remote work trip?", "This check-in should happen"),
        ("paraphrase", "can my boss say no to me working remotely for a long stretch", "If that's not the case"),
        ("paraphrase", "What do I need to bring when asking to work remotely for a while?", "This check-in should happen"),
        ("lookalike", "Who approves extended remote work if my manager is away?", "You need your manager's approval"),
        ("lookalike", "How many weeks a year can I work remotely?", "You need your manager's approval"),
        ("lookalike", "Will the company pay for my flights when I work remotely from another city?", "This check-in should happen"),
        ("offtopic", "What's on the agenda for the next company town hall?", None),
    ])
    add(cc, d, cut(t, "You should give everyone on the team as much notice as possible, but at least 7 days.", "* Update your calendar to mark which days you are working remotely"), [
        ("paraphrase", "What's the minimum notice for the team before I work away from the office for a while?", "You should give everyone"),
        ("paraphrase", "Which Slack channel do I post in when I'll be working remotely?", "Post in #office"),
        ("paraphrase", "Should I mark my remote days in my calendar?", "Update your calendar"),
        ("short", "remote work notice", "You should give everyone"),
        ("paraphrase", "do i need to tell my closest coworkers in person that im going remote", "Communicate verbally"),
        ("lookalike", "How much notice do I need to give my client before working remotely?", "You should give everyone"),
        ("lookalike", "Which Slack channel should I post in when I'm out sick?", "Post in #office"),
        ("offtopic", "How do I enrol in the 401(k) plan?", None),
        ("offtopic", "Who maintains the sales CRM?", None),
    ])
    add(cc, d, cut(t, "A non-exhaustive list of things to ensure are in order are:", "* You will be able to work a full workday every day you're working remotely"), [
        ("paraphrase", "What kind of internet connection do I need when working remotely?", "You will have a fast"),
        ("paraphrase", "Do I need a private space for calls when working from somewhere else?", "You will have a quiet"),
        ("paraphrase", "can i work half days while working remotely", "You will be able to work a full workday"),
        ("lookalike", "What minimum internet speed in Mbps is required for remote work?", "You will have a fast"),
        ("lookalike", "Will the company pay for my home internet?", "You will have a fast"),
        ("lookalike", "Does the company provide a monitor for remote work?", "You will have a distraction-free"),
        ("offtopic", "How do I report a broken office chair?", None),
    ])
    add(cc, d, cut(t, "Working remotely can add a financial burden", "we will revisit this subsidy."), [
        ("paraphrase", "Does the company pay for a co-working desk when I work remotely?", "While Clef is on its seed"),
        ("paraphrase", "how much per day can i claim for a coworking space", "While Clef is on its seed"),
        ("paraphrase", "When will the coworking allowance be reviewed?", "Once Clef reaches"),
        ("short", "coworking subsidy amount", "While Clef is on its seed"),
        ("lookalike", "Is there a monthly cap on the coworking subsidy?", "While Clef is on its seed"),
        ("lookalike", "Does the company reimburse café food and coffee when working remotely?", "While Clef is on its seed"),
        ("lookalike", "How much is the home internet subsidy per month?", "While Clef is on its seed"),
        ("offtopic", "Who is the point of contact for press inquiries?", None),
    ])
    add(cc, d, cut(t, "When we work remotely, it's our responsibility", "(be they meetings or deadlines)."), [
        ("paraphrase", "Can I work shorter hours on days I work from home?", "is not shorter than"),
        ("paraphrase", "Is it ok to skip meetings when I'm working from home?", "is not an excuse"),
        ("short", "wfh day shorter?", "is not shorter than"),
        ("lookalike", "Can I work from home on Fridays?", "When we work remotely"),
        ("lookalike", "Do remote workdays count as overtime?", "is not shorter than"),
        ("lookalike", "Can I skip meetings on days I'm out sick?", "is not an excuse"),
        ("offtopic", "How long does it take for a reimbursement to reach my bank account?", None),
    ])
    d = "Benefits and Perks/Continuing Education.md"; t = C(d)
    add(cc, d, cut(t, "Each employee has an annual budget of $4,000", "limited to four hours a week."), [
        ("paraphrase", "How much money do I get per year for training and courses?", "Each employee has an annual budget"),
        ("paraphrase", "Can I spend my education budget on books?", "Each employee has an annual budget"),
        ("paraphrase", "If I don't use all my learning money this year, does it carry over?", "This budget resets"),
        ("paraphrase", "I joined in August, is my learning budget smaller?", "The learning budget will be limited"),
        ("paraphrase", "how many hours a week can i study on company time", "Employees can also use work hours"),
        ("lookalike", "Is the learning budget taxable income?", "Each employee has an annual budget"),
        ("lookalike", "Who approves learning expenses when the founder is unavailable?", "These expenses should be discussed"),
        ("lookalike", "Do I have to repay course fees if I leave within a year?", "Each employee has an annual budget"),
        ("offtopic", "What's the guest Wi-Fi password?", None),
    ])
    add(cc, d, cut(t, "It makes Clef look great when our employees speak", "after the month of May in the calendar year."), [
        ("paraphrase", "If I'm giving a talk at a conference, will the company cover my hotel?", "For each event"),
        ("paraphrase", "How many times a year can I get travel paid for speaking at events?", "For each event"),
        ("paraphrase", "Does conference speaking come out of my learning budget?", "For each event"),
        ("paraphrase", "who decides which conferences i can speak at", "Employees should get approval"),
        ("lookalike", "Does the company cover conference tickets for attendees who aren't speaking?", "For each event"),
        ("lookalike", "Will Clef pay my meals and taxis when I speak at a conference?", "For each event"),
        ("lookalike", "Is there a bonus or speaker fee for giving talks?", "It makes Clef look great"),
        ("offtopic", "How do I change my direct deposit bank account?", None),
    ])
    add(cc, d, cut(t, "Clef understands the value of mentorship.", "for helping employees find mentors."), [
        ("paraphrase", "Will the company help me find an outside mentor?", "We will work with every employee"),
        ("paraphrase", "Can I meet my mentor during work time?", "Employees are also encouraged"),
        ("paraphrase", "where do we talk about mentoring goals", "Mentorship goals will be"),
        ("lookalike", "Will the company pay my mentor for their time?", "We will work with every employee"),
        ("lookalike", "Can I mentor someone at another company during work hours?", "Employees are also encouraged"),
        ("lookalike", "Which online platform do we use to match employees with mentors?", "In the future"),
        ("offtopic", "What is the process for requesting a standing desk?", None),
        ("offtopic", "How are quarterly sales commissions calculated?", None),
    ])
    d = "Benefits and Perks/Referral Bonuses.md"; t = C(d)
    add(cc, d, cut(t, "**We offer a $5,000 referral bonus", "should be sent to B."), [
        ("paraphrase", "How much do I get for referring a friend who gets hired?", "**We offer||incentives.**"),
        ("paraphrase", "Can founders get the referral bonus?", "All employees (except||referral bonus."),
        ("paraphrase", "Two of us referred the same person, who gets the bonus?", "The referral must represent"),
        ("paraphrase", "When is the referral bonus paid out?", "The referring employee must"),
        ("typo", "who do i send a canddiate's info to for a referal", "The referrer should send"),
        ("paraphrase", "What happens to my referral bonus if I leave before my friend's first month is over?", "The referring employee must"),
        ("lookalike", "Is the referral bonus taxed as regular income?", "**We offer||incentives.**"),
        ("lookalike", "Do I get a bonus for referring a new customer?", "**We offer||incentives.**"),
        ("lookalike", "How long does the candidate have to stay employed for me to keep the referral bonus?", "The referring employee must"),
        ("offtopic", "What's the mileage rate for using my own car?", None),
    ])
    add(cc, d, cut(t, "In order to get good referrals", "how we start the recruiting process."), [
        ("paraphrase", "Where can I see which jobs we're hiring for?", "Open positions should be posted"),
        ("paraphrase", "When is the monthly recruiting lunch?", "host a company lunch"),
        ("paraphrase", "who reaches out first to people i know for open roles", "Employees will do initial outreach"),
        ("lookalike", "What time does the second-Tuesday hiring lunch start?", "host a company lunch"),
        ("lookalike", "Which channel do we use to announce new hires' first day?", "Open positions should be posted"),
        ("lookalike", "Who pays for the food at the quarterly offsite?", "host a company lunch"),
        ("offtopic", "How do I claim travel insurance for a business trip?", None),
    ])
    d = "Benefits and Perks/Holiday List.md"; t = C(d)
    cells = re.findall(r"<td>(.*?)</td>", t)
    norm = lambda c: re.sub(r"\s+", " ", c).strip()
    rows = ["Holiday: %s; Date: %s" % (norm(cells[k]), norm(cells[k + 1])) for k in range(0, len(cells), 2)]
    assert len(rows) == 12
    add(cc, d, "\n".join(rows[:6]), [
        ("table", "Is Cesar Chavez Day a company holiday?", "Holiday: Cesar"),
        ("table", "what date do we get off for MLK day", "Holiday: Birthday of Martin"),
        ("table", "When is Presidents Day observed?", "Holiday: President"),
        ("table", "Do we get Memorial Day off?", "Holiday: Memorial"),
        ("lookalike", "Is Good Friday a company holiday?", "Holiday: Cesar"),
        ("lookalike", "Do we get the day after New Year's Day off too?", "Holiday: New Year"),
        ("lookalike", "Is Juneteenth a paid holiday?", "Holiday: Independence"),
        ("offtopic", "What's the process for getting a company credit card?", None),
    ])
    add(cc, d, "\n".join(rows[6:]), [
        ("table", "Do we get the Friday after Thanksgiving off?", "Holiday: Thanksgiving"),
        ("table", "Is Christmas Eve a day off?", "Holiday: Christmas Eve"),
        ("table", "indigenous peoples day off?", "Holiday: Indigenous"),
        ("table", "When is Labor Day?", "Holiday: Labor"),
        ("table", "veterans day date", "Holiday: Veterans"),
        ("lookalike", "Do we get New Year's Eve off?", "Holiday: Christmas Eve"),
        ("lookalike", "Is Boxing Day a holiday?", "Holiday: Christmas Day"),
        ("lookalike", "Do we get the day before Thanksgiving off?", "Holiday: Thanksgiving"),
        ("offtopic", "Who do I talk to about a payroll error?", None),
    ])
    add(cc, d, cut(t, "If a holiday falls on a weekend", "observed on the following Monday."), [
        ("paraphrase", "Christmas is on a Saturday this year, which day do we get off?", "Usually, if a holiday"),
        ("short", "holiday on sunday - when is the day off", "If it falls on a Sunday"),
        ("paraphrase", "How will I find out when a weekend holiday is observed?", "If a holiday falls on a weekend"),
        ("lookalike", "If I'm scheduled to work on a holiday, do I get a day off in lieu?", "Usually, if a holiday"),
        ("lookalike", "If a holiday falls during my vacation, do I get an extra vacation day?", "If a holiday falls on a weekend"),
        ("lookalike", "Do part-time staff who don't work Fridays get another day off when a Saturday holiday moves?", "Usually, if a holiday"),
        ("offtopic", "How do I get reimbursed for a conference ticket?", None),
    ])
    d = "Benefits and Perks/Other Protected Absences.md"; t = C(d)
    add(cc, d, cut(t, "An employee who wishes to take time off due to the death", "great grandparent, or sibling."), [
        ("paraphrase", "How many days off do I get if my grandmother dies?", "Paid bereavement leave"),
        ("paraphrase", "Is bereavement leave paid?", "Paid bereavement leave"),
        ("paraphrase", "my father-in-law passed away, can I take leave?", "Paid bereavement leave"),
        ("paraphrase", "Who do I tell if I need time off for a funeral?", "An employee who wishes"),
        ("lookalike", "How many days of bereavement leave do I get when a close friend dies?", "Paid bereavement leave"),
        ("lookalike", "Can I take bereavement leave for the death of a pet?", "Paid bereavement leave"),
        ("lookalike", "Do I need to show a death certificate to get bereavement leave?", "An employee who wishes"),
        ("offtopic", "What is our policy on accepting gifts from vendors?", None),
    ])
    add(cc, d, cut(t, "Employees will be granted up to 3 days paid time to serve on a jury", "employees will not be paid for such leaves of absence."), [
        ("paraphrase", "How many paid days do I get for jury service?", "Employees will be granted"),
        ("paraphrase", "I've been called as a witness in court, is that paid time off?", "Employees will be granted"),
        ("paraphrase", "what paperwork do i need to show for jury duty", "A copy of the jury duty"),
        ("paraphrase", "Are other legally required leaves paid?", "Unless otherwise required"),
        ("paraphrase", "If jury duty only takes a couple of hours a day, do I need to check in with my boss?", "In order to minimize"),
        ("lookalike", "Does the company pay for parking when I'm on jury duty?", "Employees will be granted"),
        ("lookalike", "Can I keep the juror fee the court pays me?", "Employees will be granted"),
        ("offtopic", "Which hotel chain do we have a corporate rate with?", None),
        ("offtopic", "Where is the first aid kit kept?", None),
    ])
    add(cc, d, cut(t, "California law entitles a childbearing employee", "Employees should give notice to the founder to whom they report."), [
        ("paraphrase", "How long can I be off work if I'm disabled by my pregnancy?", "The length of leave"),
        ("paraphrase", "does severe morning sickness count for pregnancy disability leave", "California law entitles"),
        ("paraphrase", "Can pregnancy leave be taken part-time or in pieces?", "Intermittent leave"),
        ("short", "PDL length", "The length of leave"),
        ("lookalike", "Is pregnancy disability leave paid?", "The length of leave"),
        ("lookalike", "How long is pregnancy disability leave for employees in New York?", "California law entitles"),
        ("lookalike", "Do I need a doctor's certificate for pregnancy disability leave?", "Employees should give notice"),
        ("offtopic", "Where are the printer drivers for the third floor?", None),
    ])
    d = "Benefits and Perks/Healthcare and Disability Insurance.md"; t = C(d)
    add(cc, d, cut(t, "We offer medical, dental, and vision coverage", "more details about the plans, costs, and coverage."), [
        ("paraphrase", "How much of my health insurance premium does the company pay?", "Through TriNet"),
        ("short", "Is dental covered?", "We offer medical"),
        ("paraphrase", "When does my health insurance start after I join?", "All employees are eligible"),
        ("paraphrase", "If I pick a pricier plan who pays the extra?", "The available plans range"),
        ("paraphrase", "how much does the company cover for my kids' insurance", "Through TriNet"),
        ("lookalike", "What is the deductible on the baseline medical plan?", "Through TriNet"),
        ("lookalike", "Does health coverage continue after I leave the company?", "All employees are eligible"),
        ("lookalike", "How much does the company contribute to my HSA?", "Through TriNet"),
        ("offtopic", "Can I expense a taxi home after working late?", None),
    ])
    add(cc, d, cut(t, "All employees receive Short Term Disability Insurance", "choose to waive medical coverage through TriNet."), [
        ("paraphrase", "Do we get long term disability insurance?", "All employees receive"),
        ("paraphrase", "I'm on my spouse's health plan, do I get anything for opting out?", "Clef offers a medical waiver"),
        ("paraphrase", "What's the payout level for death and dismemberment cover?", "All employees are also covered"),
        ("short", "medical opt-out allowance", "Clef offers a medical waiver"),
        ("lookalike", "What percentage of my salary does short term disability pay?", "All employees receive"),
        ("lookalike", "Can I buy extra life insurance for my spouse?", "All employees are also covered"),
        ("lookalike", "Is there an allowance for waiving dental coverage?", "Clef offers a medical waiver"),
        ("offtopic", "What time does the office close on Fridays?", None),
    ])
    d = "Operations Documents/Interview Process.md"; t = C(d)
    add(cc, d, cut(t, "The idea is to spend 30 minutes getting to know the candidate", "though we should work to have it in person when possible."), [
        ("paraphrase", "How long is the first informal interview with a candidate?", "The idea is to spend"),
        ("paraphrase", "What share of applicants get filtered out at the coffee chat stage?", "This has screened"),
        ("paraphrase", "Can the first interview be done by video call?", "This interview can take place"),
        ("paraphrase", "should we be pitching the company to candidates in the first chat", "This interview should also focus"),
        ("lookalike", "How long is the technical interview?", "The idea is to spend"),
        ("lookalike", "Who from the team should run the coffee interview?", "The idea is to spend"),
        ("lookalike", "What percentage of candidates who pass the coffee chat end up getting an offer?", "This has screened"),
        ("offtopic", "How do I update my emergency contact details?", None),
    ])
    add(cc, d, cut(t, "The technical interview is a chance to dive into", "though we should work to have it in person when possible."), [
        ("paraphrase", "Who prepares the exercises for the technical interview?", "The lead on this hire"),
        ("short", "how many exercises in tech interview", "The lead on this hire"),
        ("paraphrase", "Is there time for the candidate to ask questions in the technical round?", "The last 30 minutes"),
        ("paraphrase", "What fraction of candidates should the technical round weed out?", "This interview should filter"),
        ("lookalike", "Can candidates use Google during the technical exercises?", "The lead on this hire"),
        ("lookalike", "How long does the candidate have to finish a take-home assignment?", "The lead on this hire"),
        ("lookalike", "Who makes the final hiring decision after the technical interview?", "This interview should filter"),
        ("offtopic", "Are we open on the day after Christmas?", None),
    ])
    add(cc, d, cut(t, "Finally, the candidate should come in for a whole day", "with all travel expenses covered by Clef."), [
        ("paraphrase", "Do we pay for candidates to fly in for the final interview?", "This interview should always"),
        ("paraphrase", "Can the final round be done remotely?", "This interview should always"),
        ("paraphrase", "what happens in the afternoon of the onsite interview day", "After the morning exercises"),
        ("paraphrase", "How long is the last interview stage?", "Finally, the candidate"),
        ("lookalike", "Do we pay candidates for their time during the full-day interview?", "This interview should always"),
        ("lookalike", "Does the candidate get lunch with the team during the technical interview?", "After the morning exercises"),
        ("lookalike", "How many days after the team-fit day do candidates hear back?", "It’s also important"),
        ("offtopic", "Who can give me edit rights on the finance team's spreadsheets?", None),
    ])
    d = "Operations Documents/Onboarding.md"; t = C(d)
    add(cc, d, cut(t, "Some guidelines for the first day:", "anything else that feels welcoming or personal to them."), [
        ("paraphrase", "What time should a new hire show up on their first day?", "The day should start at 10:00"),
        ("paraphrase", "Will my laptop be set up when I arrive on day one?", "The new employee should arrive||ready for them."),
        ("paraphrase", "Do new starters get a book on their first day?", "There should also be a nice note"),
        ("paraphrase", "why does the first day start late", "The day should start at 10:00"),
        ("lookalike", "What time does a new hire's first day end?", "The day should start at 10:00"),
        ("lookalike", "Can a new hire choose between a Mac and a Windows laptop?", "The new employee should arrive||ready for them."),
        ("lookalike", "Does the new hire get a parking space on their first day?", "The day should start at 10:00"),
        ("offtopic", "What's the policy on expensing mobile phone bills?", None),
    ])
    d = "Employment Policies/Drug and Alcohol Policy.md"; t = C(d)
    add(cc, d, cut(t, "**It is the responsibility of every employee", "while representing Clef."), [
        ("paraphrase", "Can we bring beer to the office for someone's birthday?", "Alcohol in the form"),
        ("paraphrase", "what happens if I break the alcohol rules", "Employees who violate||termination."),
        ("paraphrase", "Are office events alcohol free by default?", "Though events at the Clef office"),
        ("paraphrase", "Is it ok to use drugs at a client dinner where I'm representing the company?", "Illegal drugs should not"),
        ("lookalike", "Will the company reimburse alcohol on my expense report?", "Alcohol in the form"),
        ("lookalike", "Does the company do drug testing before hiring?", "Illegal drugs should not"),
        ("lookalike", "Who should I report a colleague's drinking problem to?", "**It is the||unsafe.**"),
        ("offtopic", "How do I request a new laptop charger?", None),
        ("offtopic", "What's the process for renewing a software licence?", None),
    ])
    d = "Employment Policies/Complaint Policy.md"; t = C(d)
    add(cc, d, cut(t, "Clef has an open-door policy", "explicitly covered in our written policies."), [
        ("paraphrase", "I don't want to raise a problem with my own manager, who else can I go to?", "If for any reason"),
        ("paraphrase", "Who can I report harassment to?", "Any employee who witnesses"),
        ("paraphrase", "can i complain about something that isnt in the written policies", "We encourage employees"),
        ("paraphrase", "what email do i use to report inappropriate behaviour", "Any employee who witnesses"),
        ("lookalike", "Can I report a complaint anonymously?", "Any employee who witnesses"),
        ("lookalike", "Is there an external hotline for reporting misconduct?", "Any employee who witnesses"),
        ("lookalike", "How long does the company take to respond to a complaint?", "If something about your job"),
        ("offtopic", "Where do I find the brand logo files?", None),
    ])
    add(cc, d, cut(t, "Once a complaint has been made", "the company will take corrective action if appropriate."), [
        ("paraphrase", "What happens if my complaint is about one of the founders?", "If one or more of the founders"),
        ("paraphrase", "Will an external investigator look into harassment by a founder?", "Any reports of a founder"),
        ("paraphrase", "Will my complaint be kept confidential?", "All complaints will be handled"),
        ("short", "who handles complaints", "Once a complaint has been made"),
        ("lookalike", "Will I be told the outcome of the investigation into my complaint?", "When the investigation is complete"),
        ("lookalike", "How long does an investigation into a complaint usually take?", "When the investigation is complete"),
        ("lookalike", "Who pays for the outside investigator?", "Any reports of a founder"),
        ("offtopic", "What's the reimbursement limit for home office furniture?", None),
    ])
    d = "Employment Policies/Employee Privacy.md"; t = C(d)
    add(cc, d, cut(t, "This means that while the company will always try to respect employee privacy", "give a copy of the key or combination to one of the founders."), [
        ("paraphrase", "Can the company search my desk without telling me?", "Clef reserves the right"),
        ("paraphrase", "I put a padlock on my desk drawer, do I need to give anyone the code?", "If you use a lock"),
        ("paraphrase", "do i have any privacy on my work laptop", "This means that while"),
        ("lookalike", "Can the company search my personal car in the parking lot?", "Clef reserves the right"),
        ("lookalike", "Can my manager look through my personal backpack at work?", "Clef reserves the right"),
        ("lookalike", "Who keeps the spare keys to the office?", "If you use a lock"),
        ("offtopic", "How do I join the company softball team?", None),
    ])
    add(cc, d, cut(t, "To avoid email viruses, phishing", "could allow an outsider to attack the Clef network"), [
        ("paraphrase", "I think my laptop has a virus, who do I tell?", "If you believe your computer"),
        ("paraphrase", "Can I give my email password to a coworker while I'm on leave?", "Employees may not share"),
        ("paraphrase", "should i open an attachment from a friend if it has a weird file name", "Even if you know the sender"),
        ("typo", "phising email attachments from unknown senders - open them?", "To avoid email viruses"),
        ("lookalike", "How often do I have to change my email password?", "Employees may not share"),
        ("lookalike", "Which antivirus software should I install on my laptop?", "If you believe your computer"),
        ("lookalike", "Can I share my Slack password with a coworker?", "Employees may not share"),
        ("offtopic", "When are performance reviews held?", None),
    ])
    d = "Operations Documents/Hack Weeks.md"; t = C(d)
    add(cc, d, cut(t, "The sixth week of every quarter at Clef is a hack week.", "who they don’t work with on a daily basis."), [
        ("short", "When is hack week?", "The sixth week"),
        ("paraphrase", "How big can a hack week team be?", "Anyone can work on a project solo"),
        ("paraphrase", "can I do a hackathon project on my own", "Anyone can work on a project solo"),
        ("paraphrase", "Can I work on something unrelated to the company during hack week?", "Anyone can propose a project"),
        ("lookalike", "Is there prize money for the best hack week project?", "Anyone can propose a project"),
        ("lookalike", "Can contractors join hack week teams?", "Every employee decides"),
        ("lookalike", "How many hack week projects can one person join?", "Anyone can work on a project solo"),
        ("offtopic", "Is there a company discount for gym memberships?", None),
        ("offtopic", "How do I file an IT support ticket?", None),
    ])

    # ---------------- CivicActions guidebook ----------------
    d = "employee-benefits/us-tech-stipend.md"; t = A(d)
    add(ac, d, cut(t, "CivicActions provides \"Technology Stipends\"", "not subject to income tax in the United States."), [
        ("paraphrase", "Is the tech allowance paid monthly or once a year?", "To avoid burdensome"),
        ("paraphrase", "Do I pay tax on my technology stipend?", "Since the tech stipend"),
        ("paraphrase", "why do we get a tech stipend instead of expensing stuff", "To avoid burdensome"),
        ("lookalike", "Is the technology stipend taxable for Canadian employees?", "Since the tech stipend"),
        ("lookalike", "How much is the annual technology stipend?", "To avoid burdensome"),
        ("lookalike", "Does the tech stipend get paid in my first paycheck?", "To avoid burdensome"),
        ("offtopic", "How do I add a new dependant to my health insurance?", None),
    ])
    add(ac, d, cut(t, "## Definitions", "The amount will be reviewed annually."), [
        ("paraphrase", "How much is the tech stipend if I use my own laptop?", "The \"Payment Amount\""),
        ("paraphrase", "Are contractors eligible for the technology stipend?", "Individuals who are independent"),
        ("paraphrase", "tech stipend amount when the company gives me a laptop", "The \"Payment Amount\""),
        ("paraphrase", "When each year do I get my tech stipend?", "The Annual Eligibility Date for Eligible"),
        ("short", "BYOD stipend amount", "The \"Payment Amount\""),
        ("lookalike", "How much is the tech stipend for Canadian employees?", "The \"Payment Amount\""),
        ("lookalike", "How much was the tech stipend before 2025?", "The \"Payment Amount\""),
        ("lookalike", "Who reviews the tech stipend amount each year?", "The amount will be reviewed"),
        ("offtopic", "What's the process for requesting parental leave?", None),
        ("offtopic", "Where do I download the presentation template?", None),
    ])
    add(ac, d, cut(t, "The Technology Stipend will be paid at the current", "within ninety (90) days from their hire date."), [
        ("paraphrase", "If I quit two months after starting, do I have to give back the tech stipend?", "CivicActions retains the right"),
        ("paraphrase", "Do part-timers get the full tech allowance?", "Part Time Eligible"),
        ("paraphrase", "How is the tech stipend paid out?", "The Payment Amount will be direct"),
        ("paraphrase", "what happens to my tech stipend if i leave partway through the year", "To ensure compliance"),
        ("lookalike", "Does the company recoup the prodev budget if I leave within 90 days?", "CivicActions retains the right"),
        ("lookalike", "What happens to my company laptop if I leave within 90 days?", "CivicActions retains the right"),
        ("lookalike", "Do contractors who work part time get a prorated stipend?", "Part Time Eligible"),
        ("offtopic", "Who approves conference travel requests?", None),
    ])
    d = "employee-benefits/on-call-stipend.md"; t = A(d)
    add(ac, d, cut(t, "## Eligibility", "for at least 30 continuous calendar days."), [
        ("paraphrase", "I'm an SRE, do I get the on-call stipend?", "Team members whose work"),
        ("paraphrase", "As a project manager who has to be on call, can I get extra pay?", "Only team members who are salaried"),
        ("paraphrase", "How long do I need to be on the on-call rota to qualify for the stipend?", "Stipends will only be offered"),
        ("paraphrase", "do i get on call pay if the client doesn't need 24/7 support", "Stipends are only provided"),
        ("lookalike", "Are hourly non-exempt employees owed overtime for on-call work?", "Only team members who are salaried"),
        ("lookalike", "How much is the on-call stipend?", "Only team members who are salaried"),
        ("lookalike", "Who decides whether a client project needs 24x7 support?", "Stipends are only provided"),
        ("offtopic", "How do I get a parking permit for the office?", None),
    ])
    add(ac, d, cut(t, "## Payment", "does not affect the stipend."), [
        ("paraphrase", "How much is on-call pay per quarter?", "The on-call stipend amount"),
        ("paraphrase", "I'm on two on-call rotations, do I get two stipends?", "Team members on multiple"),
        ("paraphrase", "When does the on-call stipend get paid?", "The stipend is paid quarterly"),
        ("paraphrase", "I joined the rota halfway through the quarter, what do I get?", "This amount is prorated by day"),
        ("paraphrase", "Does being on call more often mean a bigger stipend?", "The frequency of||does not affect the stipend."),
        ("lookalike", "How much extra do I get per incident I respond to at night?", "The on-call stipend amount"),
        ("lookalike", "Was the on-call stipend amount different before July 2020?", "The on-call stipend amount"),
        ("lookalike", "Do contractors get the on-call stipend monthly?", "The stipend is paid quarterly"),
        ("offtopic", "Can I bring my kids to the office during school holidays?", None),
    ])
    add(ac, d, cut(t, "## Responsibilities", "take time off the next day to regain your balance."), [
        ("paraphrase", "How quickly do I have to respond to an alert if the project has no response plan?", "If the IRP plan does not"),
        ("paraphrase", "Can I drink alcohol while on call?", "This may mean limiting"),
        ("paraphrase", "I got paged at 3am, can I take time off the next day?", "Remember that responding"),
        ("paraphrase", "what if i can't cover my on-call shift", "Team members are responsible for being aware"),
        ("paraphrase", "Which incident plan do I follow on call if my project doesn't have one?", "Team members participating in on-call"),
        ("lookalike", "How quickly must I respond to a critical alert under the client's SLA?", "The IRP or Service Level"),
        ("lookalike", "Which paging app do I need to install for on-call alerts?", "Team members are responsible for configuring"),
        ("lookalike", "Does the company pay my phone bill while I'm on call?", "Team members are responsible for configuring"),
        ("offtopic", "Where's the template for quarterly board reports?", None),
    ])
    d = "employee-benefits/professional-development.md"; t = A(d)
    add(ac, d, cut(t, "Each full-time team member is provided an annual prodev budget of $1,200.", "more awesomer version of you"), [
        ("paraphrase", "How much is the yearly training budget?", "Each full-time team member"),
        ("paraphrase", "How soon after joining can I use my professional development money?", "If you're just starting"),
        ("paraphrase", "Can I pay for my certification exam fee with the prodev budget?", "Testing fees and renewal"),
        ("paraphrase", "can prodev money cover a hotel for a conference", "[Travel and accommodation"),
        ("paraphrase", "I work 20 hours a week, do I get the full learning budget?", "If you're a part-time"),
        ("lookalike", "Can I use my prodev budget to buy a new monitor?", "This budget can be used"),
        ("lookalike", "Does unused prodev budget roll over?", "Each full-time team member"),
        ("lookalike", "What is the prodev budget for contractors?", "Each full-time team member"),
        ("offtopic", "How do I set up my email signature?", None),
    ])
    add(ac, d, cut(t, "There are some limitations on the prodev budget usage.", "that can't be covered by your annual budget."), [
        ("paraphrase", "Can I buy a keyboard with my training budget?", "Hardware purchases"),
        ("paraphrase", "Do I need approval to buy a $30 ebook for learning?", "Anything under $50"),
        ("paraphrase", "does leftover learning money roll over to next year", "Remember that your budget"),
        ("paraphrase", "Which Unanet project do Canadian staff use for prodev expenses?", "Receipts and expense sheets"),
        ("paraphrase", "What if my course costs more than my prodev budget?", "Talk to your manager"),
        ("lookalike", "What's the spending limit for non-training purchases without manager approval?", "For spending amounts over $50"),
        ("lookalike", "Who approves prodev purchases over $500?", "For spending amounts over $50"),
        ("lookalike", "How long do I have to submit prodev receipts?", "Receipts and expense sheets"),
        ("offtopic", "Where can I find the company holiday calendar?", None),
    ])
    hdr_line = re.search(r"^\| Year .*$", t, re.M).group(0)
    hdr = [c.strip() for c in hdr_line.strip("|").split("|")]
    trs = []
    for line in t.splitlines():
        if re.match(r"^\| 20\d\d ", line):
            vals = [c.strip() for c in line.strip().strip("|").split("|")]
            trs.append("; ".join(f"{h}: {v}" for h, v in zip(hdr, vals)))
    assert len(trs) == 5
    add(ac, d, "\n".join(trs), [
        ("table", "How many people logged prodev hours in 2018?", "Year: 2018"),
        ("table", "average prodev hours per person in 2017", "Year: 2017"),
        ("table", "What was the total company prodev time in 2015?", "Year: 2015"),
        ("table", "How many staff billed professional development time in 2016?", "Year: 2016"),
        ("lookalike", "How many prodev hours did the company use in 2020?", "Year: 2019"),
        ("lookalike", "How much money was spent on prodev in 2018?", "Year: 2018"),
        ("lookalike", "How many prodev hours did the engineering team use in 2016?", "Year: 2016"),
        ("offtopic", "What are the office opening hours on public holidays?", None),
    ])
    add(ac, d, cut(t, "To provide some additional structure, support, and focus", "continuously improved upon."), [
        ("paraphrase", "How long does a prodev sprint last?", "To provide some additional"),
        ("paraphrase", "how often are the check-in meetings during a learning sprint", "During these sprints"),
        ("paraphrase", "Is there a demo at the end of a prodev sprint?", "The sprint will also consist"),
        ("lookalike", "How many people can join a prodev sprint?", "To provide some additional"),
        ("lookalike", "Is joining a prodev sprint mandatory?", "To provide some additional"),
        ("lookalike", "How often are retrospectives held in client project sprints?", "A retrospective will also"),
        ("offtopic", "What's the policy on using personal social media at work?", None),
    ])
    d = "company-policies/expenses.md"; t = A(d)
    add(ac, d, cut(t, "Employees should submit expense reports within five (5) business days", "withhold travel advances for subsequent trips."), [
        ("paraphrase", "How soon after a trip do I have to file my expenses?", "Employees should submit"),
        ("paraphrase", "What happens if I submit my expense claim two months late?", "Expense reports submitted more than"),
        ("paraphrase", "Can I get a travel advance if I still have open expense reports?", "Outstanding expense reports"),
        ("typo", "deadline for expence reports", "Employees should submit"),
        ("lookalike", "How long does it take to get reimbursed after I submit an expense report?", "Employees should submit"),
        ("lookalike", "How many days in advance do I need to request a travel advance?", "Outstanding expense reports"),
        ("lookalike", "What's the deadline for submitting timesheets?", "Employees should submit"),
        ("offtopic", "How do I put a teammate forward for the peer recognition scheme?", None),
    ])
    add(ac, d, cut(t, "All expense reports must be accurately completed", "properly approved in order to be processed for reimbursement."), [
        ("paraphrase", "Do I need a receipt for a $3 coffee?", "There is no dollar threshold"),
        ("paraphrase", "I lost my receipt, what do I do?", "For those items that do not have"),
        ("paraphrase", "can they refuse to pay back an expense with no receipt", "Management reserves the right"),
        ("short", "receipt minimum amount", "There is no dollar threshold"),
        ("lookalike", "How long do I need to keep original paper receipts after submitting?", "All expense reports must"),
        ("lookalike", "Is a credit card statement accepted instead of a receipt?", "For those items that do not have"),
        ("lookalike", "Who signs off expense reports over $5,000?", "Expense Reports must be properly"),
        ("offtopic", "What's the company's stance on four-day work weeks?", None),
        ("offtopic", "How do I book a desk in the co-working space?", None),
    ])
    add(ac, d, cut(t, "## Expense guidelines", "please consider that a single purchase and request approval first."), [
        ("paraphrase", "Can I fly first class if I pay the difference?", "For example, if you prefer first class"),
        ("paraphrase", "Is it ok to book an Airbnb for a work trip instead of a hotel?", "Consider AirBnB"),
        ("paraphrase", "I want to add a vacation stop to my work trip, what gets reimbursed?", "For example, if you prefer first class"),
        ("paraphrase", "Should I take a solo Uber or public transport on business trips?", "Reduce your footprint"),
        ("paraphrase", "who tells me what is reimbursable", "Your Project Manager and the Finance"),
        ("lookalike", "Can I fly business class on flights longer than 8 hours?", "For example, if you prefer first class"),
        ("lookalike", "What's the nightly limit for an Airbnb?", "Consider AirBnB"),
        ("lookalike", "Does the company have a corporate account with Lyft?", "Reduce your footprint"),
        ("offtopic", "How do I update my home address in the HR system?", None),
    ])
    add(ac, d, cut(t, "## Receiving reimbursement", "via payroll for our Canadian employees."), [
        ("paraphrase", "How do Canadian staff get their expenses paid back?", "The funds will be reimbursed"),
        ("paraphrase", "Are my expense refunds paid by bank transfer?", "The funds will be reimbursed"),
        ("paraphrase", "what happens after my expense report is approved", "Once all approvals"),
        ("lookalike", "How many days after approval do reimbursements arrive?", "Once all approvals"),
        ("lookalike", "How are expenses reimbursed for employees in the UK?", "The funds will be reimbursed"),
        ("lookalike", "Are reimbursements paid in US dollars for Canadian employees?", "The funds will be reimbursed"),
        ("offtopic", "How do I request access to the VPN?", None),
    ])
    d = "company-policies/travel-time-tracking-and-expenses.md"; t = A(d)
    add(ac, d, cut(t, "CivicActions will reimburse employees at the IRS", "lodging will generally be approved."), [
        ("paraphrase", "What rate do I get paid per mile for driving my own car for work?", "CivicActions will reimburse employees"),
        ("paraphrase", "Can I expense parking and tolls?", "It does not cover tolls"),
        ("paraphrase", "When are meals reimbursed on business travel?", "Meals shall normally"),
        ("paraphrase", "Do I need approval before booking a hotel for a work trip?", "Lodging expenses that are required"),
        ("paraphrase", "how much can i spend on a hotel", "At the GSA"),
        ("lookalike", "What is the mileage rate for using a company car?", "CivicActions will reimburse employees"),
        ("lookalike", "Are rental car costs reimbursed?", "CivicActions will reimburse employees"),
        ("lookalike", "What's the meal per diem on international trips?", "Meals shall normally"),
        ("offtopic", "How do I book annual leave?", None),
    ])
    add(ac, d, cut(t, "CivicActions will reimburse team members for travel expenses", "but it's still worth checking with your project team."), [
        ("paraphrase", "Can I claim my daily commute to the office?", "For onsite employees"),
        ("paraphrase", "Should I bill the client for the hours I spend travelling?", "It should be recorded as unbillable"),
        ("paraphrase", "Is travel to a client site reimbursed?", "This includes traveling"),
        ("short", "how to log travel time", "It should be recorded as unbillable"),
        ("lookalike", "Is travel time paid at overtime rates?", "Travel time is usually"),
        ("lookalike", "Can I claim travel insurance for trips to client sites?", "This includes traveling"),
        ("lookalike", "Which projects are considered firm fixed price?", "Firm fixed price projects"),
        ("offtopic", "Who runs the new hire orientation?", None),
    ])
    d = "company-policies/timesheets.md"; t = A(d)
    add(ac, d, cut(t, "You are responsible for reporting your own time, on time.", "record a 40-hour work week in their timesheet."), [
        ("paraphrase", "Do I need to log my vacation days in my timesheet?", "You will need to track all"),
        ("paraphrase", "How many hours should I put down for a half day?", "4 hours for a half day"),
        ("paraphrase", "how often do i fill in my timesheet", "Time should be tracked daily"),
        ("paraphrase", "How many hours a week should a full-timer record?", "A full-time employee is expected"),
        ("lookalike", "How many hours a week should a part-time employee record?", "A full-time employee is expected"),
        ("lookalike", "Who approves my timesheet?", "There is oversight"),
        ("lookalike", "What's the deadline for submitting timesheets at month end?", "Time should be tracked daily"),
        ("offtopic", "How do I get a company credit card?", None),
    ])
    add(ac, d, cut(t, "## How to enter time", "All time entry is to the nearest quarter (0.25)."), [
        ("paraphrase", "What's the smallest block of time I can bill a client?", "Bill your time"),
        ("paraphrase", "I did a 2 minute task and a 10 minute task on the same project, how do I log them?", "If a task took 2 minutes"),
        ("paraphrase", "can i split an hour across two charge codes", "If you need to split time"),
        ("short", "time entry rounding", "All time entry is"),
        ("lookalike", "What hourly rate do we bill clients?", "Bill your time"),
        ("lookalike", "Which charge code do I use for internal meetings?", "If you need to split time"),
        ("lookalike", "Can I log time in Unanet from my phone?", "Log your time in Unanet"),
        ("offtopic", "What's the deadline for open enrollment in benefits?", None),
        ("offtopic", "Who do I ask about ordering team t-shirts?", None),
    ])
    add(ac, d, cut(t, "You should receive your Unanet login information", "to any required client projects and tasks."), [
        ("paraphrase", "When do new starters get their timesheet login?", "You should receive your Unanet"),
        ("paraphrase", "My time tracking login doesn't work, who do I contact?", "If you did not get it"),
        ("paraphrase", "who sets up my projects in the timesheet system", "When you are hired"),
        ("lookalike", "When do new hires get their laptop?", "You should receive your Unanet"),
        ("lookalike", "Who do I contact if my Slack login isn't working?", "If you did not get it"),
        ("lookalike", "Who removes me from projects in Unanet when I leave?", "When you are hired"),
        ("offtopic", "Is there a company policy on flexible start times?", None),
    ])
    d = "company-policies/timekeeping-policies.md"; t = A(d)
    add(ac, d, cut(t, "Our full timekeeping policy is below for reference.", "are considered late."), [
        ("paraphrase", "How often do I have to fill in my timesheet?", "The most important thing"),
        ("paraphrase", "When is a timesheet considered late?", "Timesheets not entered"),
        ("paraphrase", "why is daily time entry such a big deal", "This is essential"),
        ("lookalike", "What's the penalty for submitting a late timesheet?", "Timesheets not entered"),
        ("lookalike", "When is a late expense report rejected?", "Timesheets not entered"),
        ("offtopic", "How do I order business cards?", None),
        ("offtopic", "What's the wifi password in the Portland office?", None),
    ])
    d = "company-policies/employment/us/introductory-period.md"; t = A(d)
    add(ac, d, cut(t, "This program is designed to provide support for success", "will receive their choice of company swag."), [
        ("paraphrase", "What happens at the end of my first three months?", "At the 90-day mark"),
        ("paraphrase", "When does HR check in on new hires?", "At the 60-day mark"),
        ("paraphrase", "when do I get my company swag", "Upon completion"),
        ("paraphrase", "Who do I meet with after my first month?", "At the 30-day mark"),
        ("lookalike", "What happens if I fail my 90-day review?", "At the 90-day mark"),
        ("lookalike", "Can the introductory period be extended?", "At the 90-day mark"),
        ("lookalike", "When do new hires become eligible for health insurance?", "Upon completion"),
        ("offtopic", "What's the procedure for requesting a salary advance?", None),
    ])
    d = "company-policies/prohibited-hardware-and-software.md"; t = A(d)
    add(ac, d, cut(t, "1. CivicActions employees will not use any hardware or software listed", "used for CivicActions activities or accessing CivicActions resources."), [
        ("paraphrase", "Can I use Kaspersky antivirus on my work laptop?", "Installing Kaspersky"),
        ("paraphrase", "Is it ok to check work Slack on my Huawei phone?", "Using Huawei or ZTE"),
        ("paraphrase", "can i have tiktok on the phone i use for work email", "Installing or accessing TikTok"),
        ("paraphrase", "My home security cameras are Hikvision, is that a problem if I work from home?", "Using camera systems"),
        ("lookalike", "Can I use a Xiaomi phone for work email?", "Using Huawei or ZTE"),
        ("lookalike", "Is WeChat banned on work devices?", "Installing or accessing TikTok"),
        ("lookalike", "Can I use Norton antivirus on my work computer?", "Installing Kaspersky"),
        ("offtopic", "What's the notice period for resigning?", None),
    ])
    add(ac, d, cut(t, "1. An exception are personal devices", "to address any gaps in compliance."), [
        ("paraphrase", "Can my personal Huawei phone receive 2FA text codes?", "An exception are personal devices"),
        ("paraphrase", "What happens if someone is found using a banned app for work?", "In the event of the discovery"),
        ("paraphrase", "When do we have to fill out the security questionnaire?", "As part of the CivicActions onboarding"),
        ("lookalike", "How often exactly do I have to redo the security questionnaire?", "As part of the CivicActions onboarding"),
        ("lookalike", "What sanctions apply for a first offence?", "In the event of the discovery"),
        ("lookalike", "Who reviews the completed security questionnaires?", "As part of the CivicActions onboarding"),
        ("offtopic", "How do I arrange a team lunch?", None),
    ])
    d = "company-policies/new-hire-orientation/buddy-program.md"; t = A(d)
    add(ac, d, cut(t, "A buddy typically has been with CivicActions", "to ensure they're addressed for future new hires."), [
        ("paraphrase", "How long has a buddy usually worked here?", "A buddy typically"),
        ("paraphrase", "How often should I meet my onboarding buddy in the first month?", "The frequency of these"),
        ("paraphrase", "who starts the conversations, me or my buddy", "It is the responsibility of the buddy"),
        ("short", "buddy check-in length", "Set up regular 15 minute"),
        ("lookalike", "Do buddies get paid extra for helping new hires?", "It is the responsibility of the buddy"),
        ("lookalike", "Who assigns the onboarding buddy?", "A buddy typically"),
        ("lookalike", "How often should a new hire meet their manager in the first month?", "The frequency of these"),
        ("offtopic", "How do I report a data breach?", None),
    ])
    d = "company-policies/employment/leaving-civicactions.md"; t = A(d)
    add(ac, d, cut(t, "Employees are asked to provide a minimum of 2 weeks written notice", "An exit interview may be requested."), [
        ("paraphrase", "How much notice do I have to give when I quit?", "Employees are asked"),
        ("paraphrase", "Who do I send my resignation letter to?", "The notice should be submitted"),
        ("paraphrase", "will there be an exit interview", "An exit interview"),
        ("short", "resignation notice period", "Employees are asked"),
        ("lookalike", "How much notice does the company give before laying someone off?", "Employees are asked"),
        ("lookalike", "Do I get paid for unused vacation when I resign?", "Employees are asked"),
        ("lookalike", "Who conducts the exit interview?", "An exit interview"),
        ("offtopic", "How do I sign up for the employee wellness program?", None),
    ])
    add(ac, d, cut(t, "Any company property issued to employees", "coverage under the Benefits Plan would otherwise end."), [
        ("paraphrase", "Do I have to give back my laptop when I leave?", "Any company property"),
        ("paraphrase", "Can I keep my health insurance after leaving the company?", "If you or your covered"),
        ("paraphrase", "what happens to my company credit card when i leave", "Any company property"),
        ("lookalike", "How long can I stay on COBRA coverage?", "COBRA allows you"),
        ("lookalike", "Who pays the shipping to return my laptop?", "Any company property"),
        ("lookalike", "What happens to my 401(k) when I leave?", "If you or your covered"),
        ("offtopic", "How do I get my expense report approved faster?", None),
    ])
    d = "employee-benefits/us-compensation.md"; t = A(d)
    add(ac, d, cut(t, "The standard workweek for CivicActions", "you will be paid on the preceding business day."), [
        ("paraphrase", "When is payday?", "Paychecks are direct deposited"),
        ("paraphrase", "How often do we get paid?", "We have semi-monthly"),
        ("paraphrase", "Payday falls on a Sunday this month, when do I get paid?", "If the 10th or 25th"),
        ("paraphrase", "When does the work week start for overtime purposes?", "The standard workweek||following Saturday."),
        ("typo", "wich days does the first pay period cover", "The first pay period"),
        ("lookalike", "When are bonuses paid?", "Paychecks are direct deposited"),
        ("lookalike", "What's the overtime rate for non-exempt employees?", "This is only important"),
        ("lookalike", "When is the annual salary review?", "We have semi-monthly"),
        ("offtopic", "How do I access the company's learning portal?", None),
    ])
    d = "company-policies/security.md"; t = A(d)
    add(ac, d, cut(t, "Usage of CivicActions user accounts should be as follows:", "as we do not have anti-virus scanning in place."), [
        ("paraphrase", "Can I auto-forward my work email to my Gmail?", "Automatic forwarding||is prohibited."),
        ("paraphrase", "Can I use my work Google account for a side project?", "Usage must be directly related"),
        ("paraphrase", "is it ok to send an .exe file to a coworker", "Binary software"),
        ("paraphrase", "Where should confidential client files be stored?", "Confidential information (other"),
        ("lookalike", "Can I forward a single work email to my personal account by hand?", "Automatic forwarding||is prohibited."),
        ("lookalike", "Who approves personal use of company laptops?", "Usage must be directly related"),
        ("lookalike", "Which antivirus scanner does the company use for email?", "Binary software"),
        ("offtopic", "How many days of parental leave do fathers get?", None),
    ])
    add(ac, d, cut(t, "For a password to be compliant with the CivicActions", "#password-management-tools)."), [
        ("paraphrase", "How long does my password need to be?", "For a password to be compliant"),
        ("paraphrase", "Can I reuse the same password for different work tools?", "CivicActions requires that you employ"),
        ("paraphrase", "Do I have to use a password manager?", "For this reason"),
        ("paraphrase", "does the password rule apply to my personal laptop if I use it for work", "Personal computers or devices"),
        ("short", "minimum password length", "For a password to be compliant"),
        ("lookalike", "How often do I have to change my password?", "For a password to be compliant"),
        ("lookalike", "Which password manager does the company provide?", "For this reason"),
        ("lookalike", "Do passwords need a special character?", "For a password to be compliant"),
        ("offtopic", "When is the holiday party?", None),
    ])
    add(ac, d, cut(t, "If you suspect a password has been compromised", "in the clear in an email."), [
        ("paraphrase", "I accidentally pasted my password into a chat, what should I do?", "If you suspect a password"),
        ("paraphrase", "A client emailed me a login and password in plain text, do I need to report it?", "This includes the case"),
        ("paraphrase", "should i change my password myself if it leaked", "It is usually good practice"),
        ("lookalike", "What should I do if my laptop is stolen?", "If you suspect a password"),
        ("lookalike", "How long does the Security Team take to respond to a reported incident?", "If you suspect a password"),
        ("lookalike", "What should I do if I receive a phishing email?", "If you suspect a password"),
        ("offtopic", "What's the budget for team offsites?", None),
    ])

    # Balance towards ~45 % answerable / ~35 % look-alike / ~20 % off-topic:
    # at most 4 answerable rows per passage, and in every other passage with 4,
    # drop the last plain paraphrase; in every other passage with 3 look-alikes,
    # drop the last one; add one more off-topic row to every other passage
    # that has only one.
    extra_off = [
        "How do I get a refund for a customer who was double-charged?",
        "Which font should I use in customer-facing slides?",
        "How do I schedule a recurring Zoom meeting?",
        "Where do I find the latest product roadmap?",
        "Who signs NDAs with new vendors?",
        "How do I request a new Jira project?",
        "What's the recycling policy in the kitchen?",
        "How do I log a customer support ticket for a bug?",
        "Who approves blog posts before publishing?",
        "How do I reserve the company van?",
        "What's the process for onboarding a new supplier?",
        "Where can I find the org chart?",
        "How do I request a budget increase for my department?",
        "When is the office kitchen cleaned?",
        "How do I reset the conference room display?",
        "What is the approval process for a new marketing campaign?",
        "Who manages the company's social media accounts?",
        "How do I cancel a software subscription I no longer use?",
        "What's the price list for our enterprise plan?",
        "Where is the lost and found?",
        "How do I get a quote translated for a client in Spain?",
    ]
    POS = ("paraphrase", "typo", "short", "table")
    t4 = t3 = t1 = 0
    for idx, (corpus, doc, passage, qs) in enumerate(P):
        pos = [q for q in qs if q[0] in POS]
        while len(pos) > 4:
            drop = ([q for q in pos if q[0] == "paraphrase"] or pos)[-1]
            qs.remove(drop); pos.remove(drop)
        if len(pos) == 4 and any(q[0] == "paraphrase" for q in pos):
            t4 += 1
            if t4 % 2 == 0:
                qs.remove([q for q in pos if q[0] == "paraphrase"][-1])
        look = [q for q in qs if q[0] == "lookalike"]
        if len(look) == 3:
            t3 += 1
            if t3 % 2 == 0:
                qs.remove(look[-1])
        if sum(q[0] == "offtopic" for q in qs) == 1 and extra_off:
            t1 += 1
            if t1 % 2 == 1:
                qs.append(("offtopic", extra_off.pop(0), None))

    out = Path(__file__).with_name("triples-c.jsonl")
    n = 0
    seenq = set()
    with open(out, "w", encoding="utf-8") as f:
        for corpus, doc, passage, qs in P:
            for kind, q, spec in qs:
                assert q not in seenq, q
                seenq.add(q)
                n += 1
                ans = None if spec is None else sentence(passage, spec)
                row = {"id": f"tsc-{n:04d}", "corpus": corpus, "doc": doc, "passage": passage,
                       "question": q, "label": 1 if kind in ("paraphrase", "typo", "short", "table") else 0,
                       "kind": kind, "answer_sentence": ans}
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(n, "rows", len(P), "passages")

if __name__ == "__main__":
    main()
