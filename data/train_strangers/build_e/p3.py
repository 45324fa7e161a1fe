from lib import *
C = "carpentries-handbook"

d = "topic_folders/policies/instructor-no-show-policy.md"
x = cut(C, d, "Instructors who find that they will not be able to meet", "attempt to find an alternate instructor if possible.")
P(C, d, x, [
 ("I can't teach the workshop I signed up for. Who do I tell?", "p", "Instructors who find that they will not be able"),
 ("can I pull out of a workshp two months away if nothing is bookd yet", "t", "If travel arrangement have not been made"),
 ("Who lets the host know if I drop out of teaching?", "p", "The workshop coordinator will then handle"),
 ("cancel teaching 3 weeks before, flights booked - what now", "p", "If non-refundable travel has been booked"),
 ("How do instructors sign up for a teaching engagement at a workshop?", "N"),
 ("What happens to learners' registrations if the workshop coordinator cancels a workshop?", "N"),
 ("How are instructors chosen for a workshop by the workshop coordinator?", "N"),
 ("Can an instructor cancel with no questions asked if the workshop is 3 weeks away and nothing is booked?", "L", "If travel arrangement have not been made"),
])

x = cut(C, d, "Depending on their reason for missing their agreed upon teaching engagement", "reserves the right to suspend their Carpentries instructor status.")
P(C, d, x, [
 ("If I miss a workshop do I have to pay the host back for my flight?", "p", "Depending on their reason for missing"),
 ("I got sick and couldn't teach. Who covers the host's costs?", "p", "Circumstances in which The Carpentries will reimburse the host"),
 ("what happens if an instructor no-shows twice", "p", "If an instructor is required to reimburse costs"),
 ("who decides whether i have to repay", "s", "The Carpentries may waive this requirement"),
 ("Who sits on the Carpentries Policy Subcommittee?", "N"),
 ("How can a suspended instructor get their instructor status back?", "N"),
 ("Do instructors get paid for teaching a workshop that the host cancels?", "N"),
 ("Which documents count as proof of illness for the Policy Subcommittee?", "N"),
 ("Does the Carpentries reimburse the host when an instructor misses a workshop because of a scheduling conflict?", "L", "Circumstances in which The Carpentries will reimburse the host"),
 ("Is there a gym discount for staff?", "O"),
])

d = "topic_folders/policies/core-team/professional-development-policy.md"
x = cut(C, d, "The Carpentries Core Team have access to a professional development fund", "Core Team should seek prior approval from the Finance subcommittee.")
P(C, d, x, [
 ("How much training budget does each full-time staff member get per year?", "p", "The Carpentries Core Team have access"),
 ("Does a $350 course need sign-off before I book it?", "p", "For large expenses (>$200)"),
 ("what has to go in my professional development request", "p", "When applying for reimbursement for professional development"),
 ("pd fund amount", "s", "The Carpentries Core Team have access"),
 ("Can unused professional development money roll over to the next year?", "N"),
 ("Who on the Core Team tracks how much of each employee's professional development fund has been spent?", "N"),
 ("Who sits on the Finance subcommittee and how often does it meet?", "N"),
 ("Where can I read the current Strategic Plan for The Carpentries?", "N"),
 ("Do expenses over $500 need approval from the Executive Council?", "L", "For large expenses (>$200)"),
])

d = "topic_folders/hosts_instructors/handling_emergencies.md"
x = cut(C, d, "**Situation: Co-instructor cannot come due to illness, flight delay, etc.**", "adjust the schedule of your event so that person's lesson come later in the event.")
P(C, d, x, [
 ("My co-instructor is sick and can't make it. What should I do?", "p", "Contact team@carpentries.org"),
 ("co-instructor flight delayed, how do we handle the schedule", "p", "If your co-Instructor is delayed"),
 ("Could the helpers teach part of the lesson if an instructor is missing?", "p", "Contact your helpers and host"),
 ("What is the phone number for the Carpentries team in an emergency?", "N"),
 ("Is my co-instructor paid if they cancel because of illness?", "N"),
 ("How do I report a co-instructor's bad behaviour during the event?", "N"),
 ("Will the Carpentries always find a replacement instructor if I tell them a week before?", "L", "Depending on how much notice we get"),
])

x = cut(C, d, "**Situation: Group cannot get on wi-fi**", "see if a nearby room is available.")
P(C, d, x, [
 ("The wifi is down at the workshop. How do learners install the software?", "p", "If you anticipate this in advance"),
 ("only half the learners can get online what now", "p", "If only some learners can get on wifi"),
 ("Our classroom is locked on workshop morning. What should we do?", "p", "If your room is locked"),
 ("How should we tell participants the workshop is postponed?", "p", "Contact all participants if possible"),
 ("How do I request guest wifi codes from the host building's IT department?", "N"),
 ("Which thumb drive brand and size does the Carpentries recommend?", "N"),
 ("When a workshop is postponed because the building is locked, how do we reschedule it?", "N"),
 ("Who pays for the thumb drives used to install software at a workshop?", "N"),
 ("Should you bring a portable wifi hotspot if you expect the wi-fi to fail?", "L", "If you anticipate this in advance"),
])

d = "topic_folders/policies/termed-suspension.md"
x = cut(C, d, "As a part of their enforcement options", "while an incident is under review.")
P(C, d, x, [
 ("What is a termed suspension?", "p", "As a part of their enforcement options"),
 ("Can someone be suspended before the code of conduct review is finished?", "p", "However, in severe situations"),
 ("why would the coc committee suspend someone for a set time", "p", "The goal of a Termed Suspension"),
 ("How long does a Termed Suspension usually last?", "N"),
 ("How does a suspended community member appeal the CoC committee's decision?", "N"),
 ("How are members of the CoC committee chosen?", "N"),
 ("Can the Executive Council enact an immediate Termed Suspension while an incident is under review?", "L", "However, in severe situations"),
])

x = cut(C, d, "The suspended member will, for the duration of their suspension:\n- Be asked not", "- Be removed from the instructors email list.")
P(C, d, x, [
 ("Can a suspended person still help out at workshops?", "p", "Not be able to participate as a helper"),
 ("if i'm suspended can i run my own self-organised workshop", "p", "Not be allowed to plan self-organised workshops"),
 ("Will a suspended instructor stay on the Instructors web page?", "p", "Not be listed as an instructor"),
 ("suspended - eventbrite access?", "s", "Be removed from Eventbrite login access."),
 ("How do I sign up for workshops on the Instructor Spreadsheet?", "N"),
 ("Who handles the workshop bookings a suspended instructor had already accepted?", "N"),
 ("Does a suspended instructor lose their lesson program badges permanently?", "N"),
 ("Can a suspended member still attend a workshop as a learner?", "L", "Not be able to participate as a helper"),
])

d = "topic_folders/hosts_instructors/certificates.md"
x = cut(C, d, "We do not badge learners", "Python scripts to generate them.")
P(C, d, x, [
 ("Do learners get a badge after a workshop?", "p", "We do not badge learners"),
 ("Where can I get certificates for my workshop attendees?", "p", "If you would like to give your learners certificates"),
 ("learner certificate template", "s", "This includes `svg` templates"),
 ("How do learners become certified Carpentries instructors?", "N"),
 ("Who signs the learner certificates of participation?", "N"),
 ("Can learner certificates be used for continuing education credits at universities?", "N"),
 ("Are PDF templates and R scripts provided for learner certificates?", "L", "This includes `svg` templates"),
])

d = "topic_folders/communications/tools/zoom_rooms.md"
x = cut(C, d, "Rooms are generally used as follows.", "or shared directly by the event host or organizer.")
P(C, d, x, [
 ("Which Zoom room is for instructor training?", "p", "Room 1: Instructor Training"),
 ("where do I find the zoom link for a teaching demo", "p", "For Community Discussion sessions and Teaching Demos"),
 ("Where is the password for the Carpentries Zoom rooms?", "p", "The password is available to all participants"),
 ("Who schedules events in the Zoom rooms?", "p", "Events are scheduled for each room"),
 ("How many participants can join one Carpentries Zoom room?", "N"),
 ("Are Carpentries Zoom meetings recorded and where are the recordings kept?", "N"),
 ("Does the Carpentries pay for Zoom licences for committee chairs?", "N"),
 ("Can I use a Carpentries Zoom room for a private project meeting outside the Carpentries?", "N"),
 ("Is Room 3 reserved for committee meetings?", "L", "Room 3: Other events as needed"),
])

x = cut(C, d, "If you are teaching an Instructor Training workshop, about a week before", "The logged on host can transfer host access to another participant.")
P(C, d, x, [
 ("When do trainers get the Zoom host credentials?", "p", "If you are teaching an Instructor Training workshop"),
 ("how do I get the host key for a community discussion", "p", "Two days before the event"),
 ("How do I claim host in the Zoom room?", "p", "Near the bottom of the Participants view"),
 ("claim host not working someone is already host", "p", "It is not possible to claim host access"),
 ("How do I sign up on Calendly to host a Teaching Demo?", "N"),
 ("What should I do if I lose the host key during a Community Discussion?", "N"),
 ("How long does a Teaching Demo session last?", "N"),
 ("Will hosts of a Teaching Demo get the host key a week before by email from the Core Team?", "L", "Two days before the event"),
])

x = cut(C, d, "A meeting can have only one Host, but can also have a co-host.", "- Move independently between breakout rooms")
P(C, d, x, [
 ("Can a Zoom meeting have two hosts?", "p", "A meeting can have only one Host"),
 ("Can a co-host let people in from the waiting room?", "p", "Admit people from the waiting room"),
 ("can the co-host make breakout rooms", "p", "Create breakout rooms"),
 ("I passed host to someone else. Can I get it back?", "p", "The original host loses all host priviliges"),
 ("How many co-hosts can a Carpentries Zoom meeting have at most?", "L", "A meeting can have only one Host"),
 ("How do I turn on live captions in a Carpentries Zoom meeting as host?", "N"),
 ("Does a co-host need a paid Zoom account of their own?", "N"),
 ("Can a co-host record the meeting to the cloud?", "N"),
 ("Can a co-host remove participants from the meeting?", "L", "A co-host can:"),
])

d = "topic_folders/governance/task-force-policy.md"
x = cut(C, d, "The Carpentries uses Task Forces to explore ideas", "and are approved by the Executive Council.")
P(C, d, x, [
 ("What is a task force for in the Carpentries?", "p", "The Carpentries uses Task Forces"),
 ("Who gets to propose a task force?", "p", "Task forces are proposed by the community"),
 ("who approves task forces", "s", "Task forces are proposed by the community"),
 ("How many members can a Carpentries task force have?", "N"),
 ("Who chairs the Carpentries task forces that are running now?", "N"),
 ("Are task force members paid by the Carpentries Core Team?", "N"),
 ("Does the Core Team approve new task forces?", "L", "Task forces are proposed by the community"),
])

x = cut(C, d, "The current mechanism for creation of a Task Force", "The Executive Council may terminate a Task Force at any time.")
P(C, d, x, [
 ("I want to start a task force. Who should I contact?", "p", "Members of the community interested in proposing"),
 ("when does a task force officially start", "p", "The Task Force comes into effect"),
 ("Can a task force be shut down early?", "p", "The Executive Council may terminate"),
 ("What template should a Task Force Charter follow and how long should it be?", "N"),
 ("How long does the Executive Council take to approve a Task Force Charter?", "N"),
 ("Can a terminated task force appeal to the Core Team?", "N"),
 ("Can the chair of a task force terminate it at any time?", "L", "The Executive Council may terminate"),
])

x = cut(C, d, "The task force will not undertake any of the following actions", "whether or not what they are doing requires approval.")
P(C, d, x, [
 ("Does our task force need approval to make its own logo?", "p", "Create and/or use a logo"),
 ("can a task force raise mony on its own", "t", "Launch its own fundraising campaign"),
 ("We're not sure if our plan needs sign-off. What should we do?", "p", "Task forces should consult with the Executive Council"),
 ("Can a task force publish a position statement?", "p", "Creation and/or release of position statements"),
 ("How do I get the Carpentries brand guidelines for a task force logo?", "N"),
 ("Who on the Executive Council handles task force fundraising questions?", "N"),
 ("How does the Executive Council vote on a task force's position statement?", "N"),
 ("Does a task force need Executive Council approval to publish its meeting minutes?", "L", "The task force will not undertake"),
])

d = "topic_folders/governance/committee-policy.md"
x = cut(C, d, "* Hold regular meetings, at least 4 per year", "* Appoint a [Core Team](https://carpentries.org/team/) member liaison")
P(C, d, x, [
 ("How often does a Carpentries committee have to meet?", "p", "Hold regular meetings, at least 4 per year"),
 ("do committee meetings have to be open to the public", "p", "Post meetings on the community calendar"),
 ("Does every committee need a chair?", "p", "Appoint a committee chair"),
 ("community discussions per year for a committee?", "s", "Host at least one community discussion per year"),
 ("How long is a committee chair's term?", "N"),
 ("What does the Core Team member liaison do for a committee?", "N"),
 ("How are new committee members recruited for the Code of Conduct Committee?", "N"),
 ("Must each committee hold at least 12 meetings a year?", "L", "Hold regular meetings, at least 4 per year"),
])

x = cut(C, d, "* Post meeting notes or minutes in a consistent location.", "Send written updates to the Executive Council every 6 months")
P(C, d, x, [
 ("How often do committees report to the Executive Council?", "p", "Send written updates to the Executive Council"),
 ("can committee minutes be kept private", "p", "Post meeting notes or minutes in a consistent location"),
 ("committee update frequency", "s", "Send written updates to the Executive Council"),
 ("What should a committee's written update to the Executive Council include?", "N"),
 ("Which tool should committees use to take meeting notes?", "N"),
 ("Who reads the committee updates on the Executive Council and replies?", "N"),
 ("Do committees send updates to the Core Team every 3 months?", "L", "Send written updates to the Executive Council"),
])

d = "topic_folders/hosts_instructors/unofficial_workshops.md"
x = cut(C, d, "A [standard Carpentries workshop]", "qualified to teach any lesson.")
P(C, d, x, [
 ("What makes a workshop count as a standard Carpentries workshop?", "p", "A [standard Carpentries workshop]"),
 ("I have a Data Carpentry badge. Can I teach a Software Carpentry lesson?", "p", "While Instructors do receive lesson program specific badges"),
 ("how many certified instructors does a standard workshop need", "p", "The workshop must also be taught by"),
 ("How much does it cost a host to run a standard Carpentries workshop?", "N"),
 ("How long does a standard Carpentries workshop last in hours?", "N"),
 ("How do I become a certified Carpentries Instructor?", "N"),
 ("Must a standard workshop be taught by at least two certified Instructors?", "L", "The workshop must also be taught by"),
])

d = "topic_folders/policies/incident-reporting.md"
x = cut(C, d, "If you believe someone violated the [Code of Conduct]", "or you may include your contact information.")
P(C, d, x, [
 ("Should I report something if I'm not sure it happened in a Carpentries space?", "p", "If you are not sure if the incident happened"),
 ("can i report a code of conduct problem without giving my name", "p", "The form may be completed anonymously"),
 ("How do I report a code of conduct violation?", "p", "You are encouraged to submit your report"),
 ("anonymous coc report?", "s", "The form may be completed anonymously"),
 ("How long does the Code of Conduct committee take to respond to a report?", "N"),
 ("Can I withdraw a Code of Conduct report after submitting the form?", "N"),
 ("What happens to the person I reported after the Code of Conduct committee decides?", "N"),
 ("Do I have to report a Code of Conduct incident within 30 days?", "L", "If you believe someone violated"),
])

x = cut(C, d, "**All reports will be kept confidential**", "removal of that member from the CoC committee.")
P(C, d, x, [
 ("Who gets to see the details of my report?", "p", "**All reports will be kept confidential**"),
 ("What if someone on the CoC committee is the person being reported?", "p", "In the case that a CoC committee member is involved"),
 ("can a coc committee member be kicked off the committee", "p", "Resolution action may also include removal"),
 ("How long are Code of Conduct reports kept on file?", "N"),
 ("Who appoints the replacement when a CoC committee member recuses themselves?", "N"),
 ("Are Code of Conduct reports shared with the reporter's employer?", "N"),
 ("Are report details shared with the Executive Council as well as the committee?", "L", "**All reports will be kept confidential**"),
])

d = "topic_folders/policies/privacy.md"
x = cut(C, d, "We use this information to communicate with participants, including sending", "including but not limited to funding entities.")
P(C, d, x, [
 ("Will the workshop host get my email address?", "p", "Names and email addresses may be shared with the workshop host"),
 ("do you sell or give my details to third parties", "p", "We do not provide personally identifiable information"),
 ("Does the Carpentries share stats about participants with funders?", "p", "However, we may share de-identified aggregate"),
 ("what do you use my workshop email for", "p", "We use this information to communicate with participants"),
 ("Can I get a copy of the participant information the Carpentries holds about me?", "N"),
 ("How long does the Carpentries keep workshop participants' email addresses?", "N"),
 ("Which funding entities receive the aggregate participant reports?", "N"),
 ("Is my information shared with the workshop host for marketing purposes?", "L", "Names and email addresses may be shared with the workshop host"),
])

d = "topic_folders/workshop_administration/expectations.md"
x = cut(C, d, "* Attend monthly admin team meetings.", "Recording all information according to Carpentries’ systems.")
P(C, d, x, [
 ("How often do regional coordinators meet?", "p", "Attend monthly admin team meetings."),
 ("how fast should a coordinator answer a workshop request", "p", "Respond to workshop requests from host sites"),
 ("What does answering a workshop request involve for a coordinator?", "p", "Respond to workshop requests from host sites"),
 ("workshop request response time", "s", "Respond to workshop requests from host sites"),
 ("How many hours a week do admin team members spend on workshop requests?", "N"),
 ("How do I apply to join the admin team for my region?", "N"),
 ("Which survey tool do Regional Coordinators use to set up workshop surveys?", "N"),
 ("Must coordinators reply to workshop requests within five business days?", "L", "Respond to workshop requests from host sites"),
])

d = "topic_folders/hosts_instructors/workshop_needs.md"
x = cut(C, d, "Participants are expected to come with their own laptops.", "software they need to install and set up on their laptops.")
P(C, d, x, [
 ("do lerners need to bring a laptop", "t", "Participants are expected to come"),
 ("Do we have to book a computer lab for the workshop?", "p", "Setting up a computer lab space is not necessary."),
 ("Will participants be told what to install beforehand?", "p", "Before the workshop, participants will receive"),
 ("Do participants pay a fee to attend the workshop?", "N"),
 ("What operating system do participants' laptops need?", "N"),
 ("Who provides technical support if software installation fails on a learner's laptop?", "N"),
 ("Will participants receive setup instructions on the morning of the workshop?", "L", "Before the workshop, participants will receive"),
])

x = cut(C, d, "* Sticky notes in two contrasting colors.", "to convey meaning.")
P(C, d, x, [
 ("How many sticky notes per person should we have?", "p", "We should have enough for each person"),
 ("what are the sticky notes for at a workshop", "p", "These are an important part of how we get feedback"),
 ("Some learners are colorblind. What should we do about the sticky notes?", "p", "Note that colorblindness can be an issue"),
 ("Who pays for the sticky notes and other workshop supplies?", "N"),
 ("Where can hosts order the Carpentries-branded sticky notes?", "N"),
 ("How do instructors collect written feedback on sticky notes at the end of the day?", "N"),
 ("Should each person have about 8 sticky notes in total?", "L", "We should have enough for each person"),
])
