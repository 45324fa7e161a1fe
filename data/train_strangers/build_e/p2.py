from lib import *
C = "carpentries-handbook"
d = "topic_folders/policies/reimbursement-policy.md"

x = cut(C, d, "**Travel Classes**: Travelers should book", "sharing of cars/rides is encouraged to reduce costs.")
P(C, d, x, [
 ("Can I fly business class on a Carpentries trip?", "p", "If the traveler wishes to upgrade"),
 ("Do I have to take the cheapest flight even if it has a huge layover?", "p", "For example, a cheaper fare"),
 ("what fare class should i book", "s", "**Travel Classes**: Travelers should book"),
 ("Should we share a car when a few of us travel together?", "p", "**Ride Sharing**"),
 ("Which airlines give the Carpentries discounted coach class airfare?", "N"),
 ("Can the traveler keep frequent flyer miles earned on airfare paid by the Carpentries?", "N"),
 ("Who approves the justification when a traveler books more than the economy coach fare?", "N"),
 ("Will the Carpentries pay for premium economy on flights longer than eight hours?", "L", "Travelers should book the most economical coach class"),
])

x = cut(C, d, "- *Personal Vehicles*: Reimbursement for use of a personal vehicle is based on mileage.", "airport parking charges will exceed the cost of a round-trip taxi or car service.")
P(C, d, x, [
 ("How much do I get per mile for driving my own car?", "p", "As of January 1, 2020"),
 ("are tolls and parkng paid on top of milage", "t", "However, ferry, bridge, tunnel"),
 ("My car broke down on the way to a workshop. Will they cover the repair?", "p", "Repair costs are not reimbursable"),
 ("mileage rate personal car", "s", "As of January 1, 2020"),
 ("How do I work out how many miles I drove?", "p", "Determining Mileage"),
 ("Can two people driving together both claim mileage for the same trip?", "N"),
 ("Is the mileage allowance taxable income for the traveler?", "N"),
 ("What mileage rate applies for 2021 and later years?", "L", "As of January 1, 2020"),
 ("Can I claim mileage in my personal vehicle for commuting to my regular office?", "N"),
 ("Is the mileage rate 57.5 cents per kilometre for travellers outside the US?", "L", "As of January 1, 2020"),
])

x = cut(C, d, "- *Rental Vehicles*: Reimbursement for a commercial rental vehicle", "If the insurance is required, it is reimbursable.")
P(C, d, x, [
 ("When am I allowed to rent a car for Carpentries travel?", "p", "Reimbursement for a commercial rental vehicle"),
 ("Should I buy the collision damage waiver when renting a car in the US?", "p", "For persons who own a vehicle with collision coverage"),
 ("renting a car abroad - do I take the insurance?", "p", "When traveling outside the United States"),
 ("how is fuel paid back on a rental", "s", "When renting a car, fuel costs"),
 ("I'm 23 and the rental company makes me buy insurance, is that covered?", "p", "Some states and/or car rental agencies"),
 ("Which car rental company has a corporate account with the Carpentries?", "N"),
 ("Who pays the deductible if a rented vehicle is damaged during Carpentries travel?", "N"),
 ("What size of rental vehicle am I allowed to book?", "N"),
 ("Is personal accident insurance reimbursed for travelers under 21 within the United States?", "L", "Some states and/or car rental agencies"),
])

x = cut(C, d, "- *Public Transportation*: As the preferred mode of transportation", "than any other type of public transportation or shuttle service.")
P(C, d, x, [
 ("Is public transit the preferred way to get around on a Carpentries trip?", "p", "*Public Transportation*: As the preferred mode"),
 ("how much tip can I clame for a taxi", "t", "*Taxi Service*"),
 ("When will they pay for an airport shuttle?", "p", "*Shuttle Service*"),
 ("I use a wheelchair and can't use the subway. What can I use instead?", "p", "Travelers with mobility impairments or other disabilities that make public"),
 ("Are monthly public transportation passes reimbursable for daily commuting?", "N"),
 ("Are ride-hailing apps like Uber treated as taxi service or shuttle service?", "N"),
 ("Do public transportation costs need a receipt if the ticket machine doesn't print one?", "N"),
 ("Are tips of up to 25% on shuttle service reimbursable?", "L", "*Shuttle Service*"),
])

x = cut(C, d, "**Air Transportation**: Travelers are encouraged to make reservations", "(including seat upgrades).")
P(C, d, x, [
 ("How far ahead should I book flights?", "p", "**Air Transportation**: Travelers are encouraged"),
 ("how many checked bags will they pay for", "p", "*Baggage*: Baggage fees for checking one piece"),
 ("Can I expense wifi on the plane?", "p", "*In-Flight Internet*"),
 ("Should I buy trip cancellation insurance?", "p", "*Travel Cancellation Insurance*"),
 ("extra bag on a 3 week trip covered?", "s", "For travel of longer than two weeks"),
 ("What is the maximum weight allowed for a checked bag on Carpentries travel?", "N"),
 ("Which insurer should I buy travel cancellation insurance from?", "N"),
 ("If the airline cancels my flight, who pays for the extra night before I can fly home from the airport?", "N"),
 ("Do I get time off in lieu when business travel flights fall on a weekend?", "N"),
 ("What is the most the Carpentries will pay in baggage fees per checked bag?", "L", "*Baggage*: Baggage fees for checking one piece"),
])

x = cut(C, d, "The Carpentries will pay actual room costs", "(including room upgrades)")
P(C, d, x, [
 ("How early should I book my hotel?", "p", "Travelers are encouraged to make reservations **at least** 14 days"),
 ("Can I stay at the conference hotel even if it's pricey?", "p", "When attending a conference"),
 ("hotel room service breakfast - can I claim it", "p", "**Meals charged to hotel**"),
 ("Does the Carpentries have negotiated rates with any hotel chains?", "N"),
 ("Can I book my hotel through a Carpentries travel portal?", "N"),
 ("What is the nightly price limit for a hotel in a big city?", "L", "Travelers should choose convenient, safe"),
 ("Does the Carpentries pay hotel costs for a partner who travels with me?", "N"),
 ("Will the Carpentries cover a room upgrade if the hotel is full?", "L", "**Other Fees**: Fees associated with changes or cancellation are reimbursable"),
 ("Where is the nearest fire exit on our floor?", "O"),
])

x = cut(C, d, "The Carpentries will reimburse meal expenses only when", "Tips should be noted or included on meal receipts.")
P(C, d, x, [
 ("Can I claim lunch on a day trip with no overnight stay?", "p", "The Carpentries will reimburse meal expenses only when"),
 ("Will they pay for my beer with dinner?", "p", "**Alcohol**"),
 ("what tip percentge is ok on a meal", "t", "**Tips**"),
 ("The conference includes lunch but I'm vegan. Can I buy my own?", "p", "**Provided Meals**"),
 ("Who approves the menu and caterer for a Core Team dinner at a conference?", "N"),
 ("Who approves the budget for a Core Team retreat dinner?", "N"),
 ("How do I charge a group meal for Core Team members to the company card?", "N"),
 ("Are tips of up to 30% reimbursed for exceptional service?", "L", "**Tips**"),
])

x = cut(C, d, "For cases in which vacation time is added to a business trip", "- On the day of the return flight")
P(C, d, x, [
 ("I want to add a few holiday days after the conference. What will the Carpentries still pay?", "p", "The cost of airfare, travel or lodging should be equal"),
 ("Which days are meals covered if I extend my work trip into a vacation?", "p", "Similarly, travel meals will only be reimbursed"),
 ("how do I show the price difference when I add vacation to a trip", "p", "For cases in which vacation time is added"),
 ("Do I need to use paid leave for the vacation days added to a business trip?", "N"),
 ("How many vacation days am I allowed to add to a business trip?", "N"),
 ("Can I bring my family along on a business trip that includes vacation time?", "N"),
 ("Will meals be reimbursed on the vacation days between the event and the return flight?", "L", "Similarly, travel meals will only be reimbursed"),
])

x = cut(C, d, "The Carpentries will reimburse event registration fees", "showing the cost of registration")
P(C, d, x, [
 ("Is the conference registration fee covered?", "p", "The Carpentries will reimburse event registration fees"),
 ("the conference gave me no receipt, how do I prove what I paid", "p", "If the event does not provide a receipt"),
 ("Who decides if the optional boat trip at the conference is paid for?", "p", "Decisions regarding the reimbursement for such events"),
 ("Will the Carpentries pay a speaker fee if I present at the event?", "N"),
 ("Which conferences does the Carpentries recommend Core Team members attend?", "N"),
 ("Is there a yearly limit on event registration fees per person?", "N"),
 ("Can my supervisor approve optional recreational events after the trip is over?", "L", "Decisions regarding the reimbursement for such events"),
])

x = cut(C, d, "If items are required for international travel", "if required by the country visited will be reimbursed.")
P(C, d, x, [
 ("Will they pay for the visa I need for the workshop country?", "p", "*Visa(s)/Passports*"),
 ("Can I get my travel vaccinations reimbursed?", "p", "*Medical*"),
 ("I need a plug adapter for the trip. Is that covered?", "p", "*Chargers / Adaptors*"),
 ("who approves extra items for international travel", "s", "If items are required for international travel"),
 ("Does the Carpentries give a daily cash allowance for international trips?", "N"),
 ("Does the Carpentries provide a company phone for international travel?", "N"),
 ("How long does it usually take to get a visa for a Carpentries workshop abroad?", "N"),
 ("Are optional immunizations recommended for the country visited reimbursed?", "L", "*Medical*"),
 ("Is there a bike storage room at the office?", "O"),
])
