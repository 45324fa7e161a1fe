from lib import *
C = "carpentries-handbook"
d = "topic_folders/policies/reimbursement-policy.md"

x = cut(C, d, "The Carpentries reimburses community and Core Team members", "guidelines for Carpentries-related travel reimbursement.")
P(C, d, x, [
 ("Do I need someone to okay my trip before I book anything for the Carpentries?", "p", "All travel should be pre-approved"),
 ("who signs off on carpentries travel", "s", "All travel should be pre-approved"),
 ("Will the Carpentries pay back volunteers who travel on its behalf?", "p", "The Carpentries reimburses community"),
 ("Who are the people on the Carpentries Business Team?", "N"),
 ("Does the Business Team also approve Core Team spending on software subscriptions?", "N"),
 ("How often is the Carpentries travel reimbursement policy reviewed?", "N"),
 ("Does travel have to be pre-approved by the host institution rather than the Carpentries?", "L", "All travel should be pre-approved"),
 ("How do I change the email address on my payslip?", "O"),
])

x = cut(C, d, "Carpentries-related travel expenses may be reimbursed if an individual paid", "do not meet the requirements of this policy.")
P(C, d, x, [
 ("What proof do I need to back up a travel expense claim?", "p", "**Substantiation**"),
 ("my case isn't covered by the travel policy, what should I do", "p", "If a circumstance arises"),
 ("Will they pay if my hotel costs more than the federal per diem?", "p", "The Business Team reserves the right"),
 ("can i claim a cost another organisaton already reimbursd", "t", "Reimbursement of expenses is allowed"),
 ("Who sets the U.S. federal per diem rates and how often do they change?", "N"),
 ("Can Core Team members claim personal funds spent on home office supplies?", "N"),
 ("How do I appeal if the Business Team refuses my expense report?", "N"),
 ("How many years should I keep the original receipt after my travel expense is paid?", "N"),
 ("What daily dollar amount counts as reasonable for meals under the business connection rule?", "L", "**Reasonable**"),
])

x = cut(C, d, "All travel requires pre-approval.", "connect you with a member of the Business Team for more information on the reimbursement process.")
P(C, d, x, [
 ("As a Core Team member, how do I ask for approval for a trip?", "p", "**Core Team**"),
 ("who aproves my travel costs when I fly out to teach a worksop", "t", "**Workshops and Instructor Training**"),
 ("planned expense form - who follows up?", "s", "**Core Team**"),
 ("Where do I download the planned expense form and which fields are mandatory?", "N"),
 ("How many workshops a year can one instructor teach with travel paid by the Carpentries?", "N"),
 ("Does the Workshop Administration Team also book the instructor's flights and hotel?", "N"),
 ("What happens to a Core Team member who travels without submitting a planned expense form?", "N"),
 ("If the host institution pays for my travel, does the Finance subcommittee pre-approve it?", "L", "**Workshops and Instructor Training**"),
])

x = cut(C, d, "- **Executive Council**: Members of the Executive Council", "approved will be connected with a member of the Business Team for more information on the reimbursement process.")
P(C, d, x, [
 ("Do Executive Council members need prior approval to travel to an in-person council meeting?", "p", "**Executive Council**: Members of the Executive Council"),
 ("how are council members reimbursed for an in-person meeting", "p", "Members of the Executive Council are approved to be reimbursed"),
 ("Who decides on travel support applications for CarpentryCon?", "p", "**CarpentryCon and CarpentryConnect Travel**"),
 ("How are the members of the Executive Council elected?", "N"),
 ("How many in-person Executive Council meetings are held each year?", "N"),
 ("When does the CarpentryCon travel support application open and what is the deadline?", "N"),
 ("Who sits on the CarpentryConnect planning committee?", "N"),
 ("What is the total budget for each in-person Executive Council meeting?", "L", "A budget will be created for each in-person meeting"),
])

x = cut(C, d, "Typically, travelers will be reimbursed after travel is completed.", "for guidance on returning funds to Community Initiatives.")
P(C, d, x, [
 ("I can't afford to front the airfare, can the Carpentries pay it upfront?", "p", "Make airfare, travel insurance"),
 ("My trip was cancelled after I was reimbursed. What do I do with the money?", "p", "In the event that travel is cancelled"),
 ("how long do i have to retrun money for a canceled trip", "t", "Return of excess funds must be completed"),
 ("deadline to repay cancelled travel?", "s", "Return of excess funds must be completed"),
 ("What is Community Initiatives and what other services does it provide to the Carpentries?", "N"),
 ("Which travel agency does the Carpentries use when it books airfare directly?", "N"),
 ("Who pays the bank fees when I return funds to Community Initiatives by wire transfer?", "N"),
 ("Can The Carpentries pre-pay travel for Executive Council members' spouses?", "N"),
 ("Do I have 90 days to send back funds for a cancelled event?", "L", "Return of excess funds must be completed"),
 ("What is the best way to give feedback on my manager?", "O"),
])

x = cut(C, d, "In order for a travel expense to be reimbursed, it must be properly substantiated.", "- Proof of purchase (i.e., Payment Method)")
P(C, d, x, [
 ("Is a phone photo of my receipt good enough?", "p", "A digital image of the original receipt"),
 ("do emailed reciepts count", "t", "Electronic receipts received via email"),
 ("What should a receipt show for it to be accepted?", "p", "A valid receipt typically includes:"),
 ("Which app should I use to make a digital image of my receipts?", "N"),
 ("What currency should the amount on a foreign receipt be converted to?", "N"),
 ("Can the service provider send the original invoice directly to the fiscal sponsor?", "N"),
 ("For how many months after the purchase is a digital image of the receipt accepted?", "L", "A digital image of the original receipt"),
])

x = cut(C, d, "The partial reimbursement of a receipt may occur when:", "[finance@carpentries.org](mailto:carpentries.org).")
P(C, d, x, [
 ("We paid for a group dinner on one bill. Can I still get my part reimbursed?", "p", "The receipt includes purchases for others"),
 ("I lost a receipt from my trip. What now?", "p", "If a required receipt has been lost"),
 ("my receipt has a glass of wine on it, will the whole thing be refused", "p", "Items on the receipt do not align"),
 ("lost receipt who to contact", "s", "Seek guidance on alternate methods"),
 ("Will the Business Team reimburse alcohol at a team celebration that isn't during travel?", "N", "Items on the receipt do not align"),
 ("Who pays for the other diners when a group receipt is split?", "N"),
 ("How many lost receipts can one person have before reimbursement is refused?", "N"),
 ("Can I file a police report instead of a lost receipt explanation?", "N"),
 ("Is a partial reimbursement allowed when the receipt is in a foreign language?", "L", "The partial reimbursement of a receipt may occur when:"),
])

x = cut(C, d, "Reimbursement requests and documentation should be submitted to The Carpentries Business Team", "Core Team members should follow the Reimbursement Workflow for the submission of expenses for reimbursement.")
P(C, d, x, [
 ("Where do I send my expense claim after a trip?", "p", "Reimbursement requests and documentation should be submitted"),
 ("what info goes on the expense reimbursment form", "t", "Completed Expense Reimbursement Request form:"),
 ("Do I need to explain why a receipt is missing on the form?", "p", "If applicable, explanation of why requirements are not being met"),
 ("Who does the Business Team send approved claims to for payment?", "p", "The Carpentries Business Team will review the submitted documents"),
 ("Where can I find the Reimbursement Workflow for Core Team members and what steps does it have?", "N"),
 ("Who fills in the Wire Transfer Form if the traveler's bank is outside the United States?", "N"),
 ("What does the fiscal sponsor charge the Carpentries for each payment?", "N"),
 ("Can I submit the Expense Reimbursement Request form in a language other than English?", "N"),
 ("Should I include my phone number and date of birth on the reimbursement request?", "L", "Completed Expense Reimbursement Request form:"),
])

x = cut(C, d, "To be reimbursable, travel expenses must be properly substantiated and submitted within the following timeframes:", "The Carpentries reserves the right to refuse reimbursement for late submissions.")
P(C, d, x, [
 ("How many days after teaching a workshop do I have to file my expenses?", "p", "**Workshop and Instructor Training Related Travel**"),
 ("I went to a conference for the Carpentries. How long do I have to claim?", "p", "**Other Carpentries-Related Travel**"),
 ("what if I send my claim in late", "p", "If a reimbursement request is submitted later"),
 ("instructor training expense deadline", "s", "**Workshop and Instructor Training Related Travel**"),
 ("Can instructors claim expenses for the days they spend preparing to teach?", "N"),
 ("Do instructors get paid a teaching fee for a workshop on top of travel expenses?", "N"),
 ("Who reviews the explanation for a late reimbursement request and how long do they take?", "N"),
 ("Can a workshop host set its own deadline for instructor travel claims?", "N"),
 ("Do I have 30 calendar days after a workshop to submit my expenses?", "L", "**Workshop and Instructor Training Related Travel**"),
])

x = cut(C, d, "If you reside in the United States, you will be reimbursed with a physical check.", "via wire 2-3 weeks following your submission.")
P(C, d, x, [
 ("I live in the US. How will my reimbursement arrive?", "p", "If you reside in the United States"),
 ("How will I be paid back if I live in Germany and am not a Velocity Global employee?", "p", "If you reside outside the United States, and are not employed"),
 ("how long till the chek shows up", "t", "You should receive a check addressed"),
 ("reimbursement by wire how long", "s", "You should receive the funds via wire"),
 ("Can I have my reimbursement check mailed to my office instead of my home address?", "N"),
 ("What is Velocity Global and which countries does it employ Carpentries staff in?", "N"),
 ("Who do I contact if my reimbursement check is lost in the mail?", "N"),
 ("Does the Carpentries cover currency exchange losses on wire transfers?", "N"),
 ("Do people outside the US who are employed through Velocity Global get a wire transfer?", "L", "If you reside outside the United States, and are employed"),
 ("Which public holidays does the Dublin office close for?", "O"),
])
