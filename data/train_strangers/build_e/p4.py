from lib import *
C = "reg-handbook"

d = "content/docs/employee_processes/probation.md"
x = cut(C, d, "During the initial 6 months in a team member's appointment", "performing their job as expected.")
P(C, d, x, [
 ("How long is probation when you join REG?", "p", "During the initial 6 months"),
 ("I already passed probation in another Turing job. Do I have to do it again in REG?", "p", "(Note that if an existing team member"),
 ("who runs my probation review", "s", "During the initial 6 months"),
 ("What is probation meant to check?", "p", "This is designed to integrate with the on-boarding process"),
 ("What notice period applies if someone leaves during probation?", "N"),
 ("Can a line manager end someone's appointment early during probation?", "N"),
 ("Is the on-boarding process different for team members who are on probation?", "N"),
 ("Does probation last 3 months for internal transfers from another institute?", "L", "(Note that if an existing team member"),
])

x = cut(C, d, "Probation in REG is a lightweight review process", "which is very normal.")
P(C, d, x, [
 ("When are the probation check-in meetings?", "p", "Turing policy is that such reviews should occur"),
 ("I don't have a project yet at 3 weeks. What about my objectives?", "p", "**3 weeks:**"),
 ("who does my manager ask for feedback at the 3 month review", "p", "**3 months:**"),
 ("probation meeting schedule", "s", "Turing policy is that such reviews should occur"),
 ("Where do I record my probation objectives, and which form do I use?", "N"),
 ("Can I choose which collaborators give feedback at my probation review?", "N"),
 ("How many probation objectives should I set at 3 weeks?", "L", "**3 weeks:**"),
 ("What happens if I miss my 3 month probation review because I'm on leave?", "N"),
])

x = cut(C, d, "- **5 months:** Final review prior to end of probation.", "would benefit from additional time to settle into the role.")
P(C, d, x, [
 ("What happens if someone is underperforming at the 5 month review?", "p", "In cases where someone is underperforming"),
 ("how long can probation be extended", "p", "In cases where someone is underperforming"),
 ("When is the decision made to pass probation?", "p", "**6 months:**"),
 ("extend probation by how much?", "s", "In cases where someone is underperforming"),
 ("Can probation be extended a second time after the extra 3 months?", "N"),
 ("Who signs the letter confirming a team member passed probation at 6 months?", "N"),
 ("Does extending probation for an underperforming team member delay their annual leave?", "N"),
 ("Is probation usually extended by 6 months for underperformance?", "L", "In cases where someone is underperforming"),
])

x = cut(C, d, "Upon passing probation, the REG Leadership Team", "we have a separate process for development and promotion for Juniors, summarised below.")
P(C, d, x, [
 ("Does my salary get looked at after probation?", "p", "Upon passing probation"),
 ("who reviews salaries at the end of probation", "p", "Upon passing probation"),
 ("Do Juniors get a pay review after probation?", "p", "Juniors will not undergo pay review"),
 ("How big is the usual salary rise after passing probation?", "N"),
 ("Who are the current REG Principals on the Leadership Team?", "N"),
 ("Can I appeal the Leadership Team's salary decision after probation?", "N"),
 ("Does the REG Director alone review salaries after probation?", "L", "Upon passing probation"),
])

x = cut(C, d, "Juniors are assessed at the end of probation", "are promoted to Standard as soon as they are ready.")
P(C, d, x, [
 ("How often do Juniors get promotion reviews?", "p", "but have additional promotion reviews"),
 ("when does a junior's pay first change", "p", "The first promotion review occurs"),
 ("What if a Junior is growing but not ready for Standard?", "p", "The first promotion review occurs"),
 ("What skills does a Junior need to show to be promoted to Standard?", "N"),
 ("Who sits on the panel for a Junior's promotion review?", "N"),
 ("How many Juniors are promoted to Standard each year?", "N"),
 ("How much is the development pay increase for a Junior who is not promoted?", "L", "The first promotion review occurs"),
])

x = cut(C, d, "From the 2023-24 appraisal year, all REG staff who have completed probation on or before 31 May", "**progression awards will be pro-rated for staff with less than 12 months of service**.")
P(C, d, x, [
 ("I finish probation on 15 March. Am I eligible for a progression award?", "p", "From the 2023-24 appraisal year"),
 ("Do I go through the formal appraisal in Cezanne if I passed probation in December?", "p", "All employees who complete probation on or before 31 January"),
 ("I've only been here 8 months - do I get the full progression award?", "p", "Whether undergoing the formal or informal appraisal process"),
 ("progression award cutoff date", "s", "From the 2023-24 appraisal year"),
 ("How do I log in to Cezanne for the formal appraisal process?", "N"),
 ("What percentage of salary is a typical progression award?", "N"),
 ("When in the year are progression awards paid?", "N"),
 ("Are staff who complete probation in June eligible for a pro-rated progression award?", "L", "From the 2023-24 appraisal year"),
])

d = "content/docs/employee_processes/annual_appraisals.md"
x = cut(C, d, "1. REG members who are operating at an equivalent level", "This is very much in line with the guidance on salary increases from HR.")
P(C, d, x, [
 ("Should two people at the same level be paid the same?", "p", "REG members who are operating at an equivalent level"),
 ("if I'm doing fine in my role, will I move up my pay band", "p", "Everyone who is performing and developing"),
 ("Is the progression on top of cost of living?", "p", "Everyone who is performing and developing"),
 ("How many steps are there in each REG pay band?", "N"),
 ("What is this year's cost of living adjustment percentage?", "N"),
 ("Who decides whether someone is performing as expected for their role?", "N"),
 ("Does everyone progress through their pay band every two years?", "L", "Everyone who is performing and developing"),
 ("Where do I find the fire evacuation plan?", "O"),
])

d = "content/docs/working_at_the_turing/expenses.md"
x = cut(C, d, "Out-of-pocket expenses should be reclaimed using ERPx.", "which can be claimed up to a year after starting employment).")
P(C, d, x, [
 ("What system do I use to claim back money I spent?", "p", "Out-of-pocket expenses should be reclaimed"),
 ("how long do I have to submitt an expense claim", "t", "You should submit an expense claim"),
 ("Can I still claim my visa costs 8 months after I started?", "p", "You should submit an expense claim"),
 ("expense claim deadline", "s", "You should submit an expense claim"),
 ("How long does it take for an ERPx expense claim to be paid out?", "N"),
 ("Who approves my out-of-pocket expense claims in ERPx?", "N"),
 ("What out-of-pocket expenses are not allowed to be claimed?", "N"),
 ("Can visa costs be claimed up to two years after starting employment?", "L", "You should submit an expense claim"),
])

x = cut(C, d, "Gray Dawes is the Institute's pre-paid travel and accommodation booking system", "so make sure you do this in advance.")
P(C, d, x, [
 ("How can I book a work trip without paying for it myself?", "p", "Gray Dawes is the Institute's pre-paid travel"),
 ("am I set up on Gray Dawes automatically", "p", "Staff are not automatically added"),
 ("How long does it take to get a Gray Dawes account?", "p", "It can take 5-7 working days"),
 ("gray dawes account who to ask", "s", "If you need to make a booking"),
 ("Can I book flights for a visiting speaker through Gray Dawes?", "N"),
 ("Which hotels can be booked on Gray Dawes and is there a nightly limit?", "N"),
 ("What happens if my Gray Dawes booking needs to be cancelled?", "N"),
 ("Does it take 2-3 working days to set up a Gray Dawes account?", "L", "It can take 5-7 working days"),
])

x = cut(C, d, "1. Complete the 'Travel request' form on ERPx.", "proceed to book travel and accommodation on [Gray Dawes](https://www.atriis.app/home).")
P(C, d, x, [
 ("Where's the travel request form?", "p", "Complete the 'Travel request' form on ERPx"),
 ("Will my budget holder be told that my travel request is waiting?", "p", "Ping your budget holder"),
 ("how do i know my travel request got approved", "p", "Once approved, your request will appear under 'approved'"),
 ("Who approves a travel request?", "p", "This will be sent to the budget holder"),
 ("What information does the ERPx travel request form ask for?", "N"),
 ("Who is my budget holder if I work across two projects?", "N"),
 ("Can a budget holder delegate approval of travel requests while on leave?", "N"),
 ("Will I get an email once my travel request is approved?", "L", "Once approved, your request will appear under 'approved'"),
])

d = "content/docs/how_we_work/remote_working.md"
x = cut(C, d, 'Unless requested from IT, you will have a "Basic" Zoom account.', "sys_id=00d62ee31b65f510808eea01b24bcbbe).")
P(C, d, x, [
 ("How long can my Zoom meetings be on a basic account?", "p", "This allows you to create meetings"),
 ("I need a 2 hour Zoom call. What do I do?", "p", "For meetings longer than this"),
 ("how do i get a zoom pro acount", "t", "To request a Pro account"),
 ("zoom basic time limit", "s", "This allows you to create meetings"),
 ("How long does IT take to approve a Zoom Pro account request?", "N"),
 ("Can I record Zoom meetings on a Basic account and where are recordings stored?", "N"),
 ("Does the Pro Zoom account cost my project budget anything?", "N"),
 ("Is a Basic Zoom account limited to 60 minutes for meetings with three people?", "L", "This allows you to create meetings"),
])

x = cut(C, d, "Zoom Rooms (like those associated with each meeting room in the office)", "so some justification should be given).")
P(C, d, x, [
 ("What is a Zoom Room?", "p", "Zoom Rooms (like those associated"),
 ("can I ask IT for an extra zoom room", "p", "Additional rooms might be able to be requested"),
 ("How much does an extra Zoom Room cost?", "p", "Additional rooms might be able to be requested"),
 ("How do I book the Zoom Room in an office meeting room for a specific time?", "N"),
 ("Which office meeting rooms have Zoom Rooms set up?", "N"),
 ("Who signs off on the cost of an additional Zoom Room?", "N"),
 ("Are extra Zoom Rooms priced at £32 per year?", "L", "Additional rooms might be able to be requested"),
])

x = cut(C, d, "REG uses Gather for some of the coffee breaks and social events.", "Note: Gather is blocked on the Turing VPN and on IT-managed computers.")
P(C, d, x, [
 ("What does REG use Gather for?", "p", "REG uses Gather for some of the coffee breaks"),
 ("Gather won't load on my work laptop. Why?", "p", "Note: Gather is blocked"),
 ("What is Gather like?", "p", "It gives a virtual space"),
 ("can I use gather on the vpn", "s", "Note: Gather is blocked"),
 ("When are the REG coffee breaks held each week?", "N"),
 ("Who pays for the REG Gather space subscription?", "N"),
 ("How many people can be in the REG Gather space at once?", "N"),
 ("Is Gather blocked on personal computers too?", "L", "Note: Gather is blocked"),
])

d = "content/docs/working_at_the_turing/reasonable_adjustments.md"
x = cut(C, d, "When starting your role at The Alan Turing Institute, you will be invited to fill out a health form", "These updates will follow the same process to ensure continued support.")
P(C, d, x, [
 ("How do I ask for a reasonable adjustment when I start?", "p", "When starting your role"),
 ("Who reviews a reasonable adjustment request?", "p", "Your request will be reviewed"),
 ("my situation has changed - can I ask for new adjustments later on?", "p", "If your circumstances change"),
 ("Could I be sent to occupational health?", "p", "In some cases, you may be referred"),
 ("How long does HR take to decide on a reasonable adjustment request?", "N"),
 ("Who pays for equipment agreed as a reasonable adjustment?", "N"),
 ("Can I fill in the Cezanne health form on paper instead?", "N"),
 ("Is a reasonable adjustment request reviewed by my line manager and occupational health only?", "L", "Your request will be reviewed"),
])

x = cut(C, d, "Reasonable adjustments can also be requested for the application and interview process.", "will be treated confidentially.")
P(C, d, x, [
 ("Can I get extra time in my interview?", "p", "These may include adjustments to the interview format"),
 ("who do I email about adjustments for my job interview", "p", "If you require any adjustments"),
 ("Is my adjustment request kept private?", "p", "This email is monitored by the HR team"),
 ("Who sits on the interview panel during the application process?", "N"),
 ("How many interview stages does the application process have?", "N"),
 ("Can I get travel costs reimbursed for attending an interview as part of the application process?", "N"),
 ("Is the adjustments email monitored by the hiring manager?", "L", "This email is monitored by the HR team"),
 ("What time does the canteen open?", "O"),
])

x = cut(C, d, "All Turing staff are entitled to financial support for setting up a home workspace", "Claims for this can be made through the expenses system.")
P(C, d, x, [
 ("Will the Turing pay for a desk and chair at home?", "p", "All Turing staff are entitled"),
 ("how do I claim for my home office setup", "p", "Claims for this can be made"),
 ("Is home office support only for people without a good setup?", "p", "This support is available to all staff"),
 ("What is the maximum amount I can claim for a home desk and chair?", "L", "All Turing staff are entitled"),
 ("Can I claim part of my home internet and electricity bills?", "N"),
 ("Is the home workspace support taxed as a benefit in kind?", "N"),
 ("Do I have to return the home office desk and chair if I leave?", "N"),
])

d = "content/docs/onboarding/buddy_system.md"
x = cut(C, d, "Before the new starter starts at the Turing they should be assigned **two buddies**", "get a feel for the wider Turing ecosystem.")
P(C, d, x, [
 ("How many buddies does a new starter get?", "p", "Before the new starter starts"),
 ("should my buddy be on the same projct as me", "t", "If possible, the buddies should not be assigned"),
 ("Why would a new starter have a buddy from another team?", "p", "We think that in a remote & hybrid setting"),
 ("Does buddying a new starter count towards my annual appraisal?", "N"),
 ("Do buddies get time off or credit for buddying a new starter?", "N"),
 ("How long does the buddy arrangement last after the new starter joins?", "N"),
 ("Should buddies be more senior than the new starter?", "L", "If possible, the buddies should not be assigned"),
])

x = cut(C, d, "- Have a coffee with the new employee on their first day.", "- Meet the new starter where they are at.")
P(C, d, x, [
 ("What should a buddy do on the new person's first day?", "p", "Have a coffee with the new employee"),
 ("do buddies introduce new people to the team", "p", "If needed, introduce them to the team"),
 ("As a buddy, which page should I make sure the new starter knows?", "p", "Make sure the new starter is familiar"),
 ("Who pays for the coffee when a buddy meets the new employee?", "N"),
 ("What time is the welcome coffee for the team?", "N"),
 ("How does a new starter get set up with a laptop on their first day?", "N"),
 ("Should the buddy have lunch with the new employee on their first day?", "L", "Have a coffee with the new employee"),
])

d = "content/docs/how_we_work/line-management.md"
x = cut(C, d, "At (current) senior level, people are expected to line manage 1-2 standards.", "at least during probation.")
P(C, d, x, [
 ("How many people does a senior usually line manage?", "p", "At (current) senior level"),
 ("I'm a senior and happy to manage 3 people. Who do I tell?", "p", "Currently, if seniors are willing"),
 ("do standards get to line manage anyone", "p", "At standard level, opportunities"),
 ("Is my line manager on my project?", "p", "At both levels, we try to avoid overlaps"),
 ("Is there training for people who start line managing in REG?", "N"),
 ("How do I ask to change my line manager?", "N"),
 ("How often should a line manager meet the people they manage?", "N"),
 ("Are seniors expected to line manage 3-4 standards?", "L", "At (current) senior level"),
])

x = cut(C, d, "- discuss what their day-to-day might look like", "- 10% personal development")
P(C, d, x, [
 ("How much of my time goes on projects?", "p", "80% projects"),
 ("how much time do I get for personal development", "p", "10% personal development"),
 ("What share of the week is REG responsibilities like service areas?", "p", "10% REG responsibilities"),
 ("How do I record time spent on personal development in Harvest?", "N"),
 ("Which service areas can a new team member join?", "N"),
 ("Can unused personal development time be carried over to the next month?", "N"),
 ("Is 20% of time set aside for personal development?", "L", "10% personal development"),
])
