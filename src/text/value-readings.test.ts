import assert from 'node:assert/strict'
import { test } from 'node:test'
import { changedValue, valueReadings } from './value-readings.ts'

/*
 * The generalization check of decision 0078: pairs written for this test, across domains and
 * wordings, none taken from a benchmark. An update gives a subject a new value; a non-update shares
 * words with the earlier statement (often the subject, or the value) without changing a value.
 */
const UPDATES: Array<[string, string]> = [
  ['I live in Lisbon with my partner.', 'We moved to Berlin last spring, the flat is tiny.'],
  ['I work at Google on the maps team.', 'I joined Stripe in March.'],
  ['My rent is $1,200 a month.', 'The landlord raised my rent to $1,450.'],
  ['Our service runs on Node 18.4.0 in production.', 'We upgraded production from 18.4.0 to 20.11.1.'],
  ['The launch is on March 5.', 'The launch got pushed to April 2.'],
  ['My manager is Alice Chen.', 'My manager is now Bob Okafor.'],
  ["I'm on parental leave until the summer.", "I'm back at work since Monday, part-time."],
  ['The login API answers in 180 ms under load.', 'After the cache fix the login API now answers in 120 ms.'],
  ['We use MySQL for the orders database.', 'We switched the orders database from MySQL to PostgreSQL.'],
  ['I weigh 82 kg.', 'I now weigh 76 kg after the summer.'],
  ['My daily standup is at 9:30.', 'The daily standup moved to 10:15.'],
  ['The budget for the kitchen is $15,000.', 'We cut the kitchen budget to $11,000.'],
  ['I work as a data analyst.', 'I got promoted to senior data engineer.'],
  ['Our team has 6 engineers.', 'The team now has 9 engineers.'],
  ['I use Vim for everything.', 'I now use VS Code for everything.'],
  ['The test coverage is 62%.', 'Coverage is now 78%.'],
  ['My sister lives in Toronto.', 'My sister moved to Vancouver.'],
  ['The deadline is June 30.', 'The deadline changed to July 15.'],
  ['The project is on hold.', 'The project is now in progress again.'],
  ['My commute takes 45 minutes.', 'With the new train my commute takes 25 minutes.'],
  ['I work at Acme Corp.', 'I no longer work at Acme Corp.'],
  ['The subscription costs $12 a month.', 'The subscription now costs $15.'],
  ['Our cluster has 64 GB of memory per node.', 'We bumped memory per node to 128 GB.'],
  ['My dentist appointment is on October 3.', 'I rescheduled the dentist appointment to October 10.'],
]

const NON_UPDATES: Array<[string, string]> = [
  ['I live in Lisbon.', 'Lisbon has the best pastries, I love living here.'],
  ['My rent is $1,200 a month.', 'My car payment is $300 a month.'],
  ['I work at Google.', 'My friend Sam works at Meta.'],
  ['The launch is on March 5.', 'The launch went really well, everyone loved it.'],
  ['I ran 5 km today.', 'I ran 10 km yesterday with Tom.'],
  ['We use PostgreSQL for orders.', 'PostgreSQL handles the orders load fine.'],
  ['The login API answers in 180 ms.', 'The search API answers in 300 ms.'],
  ['My manager is Alice Chen.', 'Alice Chen gave a great talk about hiring.'],
  ['I weigh 82 kg.', 'My suitcase weighs 23 kg.'],
  ['The deadline is June 30.', 'Is the deadline June 30 or later?'],
  ["I'm on parental leave.", 'My colleague is on vacation this week.'],
  ['Our team has 6 engineers.', 'Our team has 6 engineers and a designer.'],
  ['I use Vim for everything.', 'Vim keybindings are hard to learn at first.'],
]

function accuracy(updates: Array<[string, string]>, nonUpdates: Array<[string, string]>): { right: number; total: number; misses: string[] } {
  let right = 0
  const misses: string[] = []
  for (const [earlier, later] of updates) {
    if (changedValue(valueReadings(earlier), valueReadings(later)) !== undefined) right++
    else misses.push(`missed update: ${earlier} → ${later}`)
  }
  for (const [earlier, later] of nonUpdates) {
    const change = changedValue(valueReadings(earlier), valueReadings(later))
    if (change === undefined) right++
    else misses.push(`false update: ${earlier} → ${later} (${JSON.stringify(change)})`)
  }
  return { right, total: updates.length + nonUpdates.length, misses }
}

test('the changed-value rule on update pairs and non-updates written for it (decision 0078)', () => {
  const { right, total, misses } = accuracy(UPDATES, NON_UPDATES)
  console.log(`value-change accuracy ${right}/${total}${misses.length > 0 ? `\n${misses.join('\n')}` : ''}`)
  assert.ok(UPDATES.length >= 20 && NON_UPDATES.length >= 10)
  assert.ok(right / total >= 0.9, misses.join('\n'))
})

/*
 * Written after the rules above were frozen, and not used to change them: the honest figure of
 * the rule on wording it was not developed on (decision 0078 reports it).
 */
const LATER_UPDATES: Array<[string, string]> = [
  ['My son goes to Riverside Elementary.', 'My son is now at Oakwood Academy.'],
  ['The coffee machine costs 450 euros.', 'The price of the coffee machine dropped to 380 euros.'],
  ['Our API rate limit is 100 requests per minute.', 'We increased the rate limit to 250 requests per minute.'],
  ['I drive a 2015 Honda Civic.', 'I switched from the Civic to a Tesla Model 3.'],
  ['My phone number ends in 4471.', 'I changed my phone number, it now ends in 9302.'],
  ['The wedding is on September 14.', 'The wedding was moved to September 21.'],
  ['I sleep about 6 hours a night.', 'These days I sleep 8 hours a night.'],
  ['The repository is public.', 'The repository is now private.'],
  ['Our office is in Manchester.', 'Our office relocated to Leeds.'],
  ['My blood pressure was 145 over 95 at the check.', 'My blood pressure is now 128.'],
  ['Kafka is our message broker.', 'We replaced Kafka with RabbitMQ as our message broker.'],
  ['Python 3.9 is what the pipeline runs on.', 'The pipeline now runs on Python 3.12.'],
]
const LATER_NON_UPDATES: Array<[string, string]> = [
  ['The coffee machine costs 450 euros.', 'The coffee machine makes great espresso.'],
  ['Our office is in Manchester.', 'Manchester was rainy all week.'],
  ['I sleep about 6 hours a night.', 'My daughter sleeps 10 hours a night.'],
  ['The wedding is on September 14.', 'The rehearsal dinner is on September 13.'],
  ['Python 3.9 is what the pipeline runs on.', 'Python is my favourite language.'],
  ['The repository is public.', 'The repository has 40 contributors.'],
]

/*
 * A third set, written after the fixes the second one led to (12/18 before them, 17/18 after),
 * and not used to change the rules.
 */
const THIRD_UPDATES: Array<[string, string]> = [
  ['My gym membership is $40 per month.', 'The gym membership went up to $55 per month.'],
  ['My therapist is Dr. Patel.', 'My therapist is now Dr. Moreau.'],
  ['The build takes 14 minutes.', 'The build now takes 6 minutes since we added caching.'],
  ['I live in Austin.', "I'm based in Denver now."],
  ['The quarterly review is on May 12.', 'They postponed the quarterly review to May 26.'],
  ['We deploy with Jenkins.', 'We moved our deploys from Jenkins to GitHub Actions.'],
  ['Our monthly active users are 12,000.', 'Monthly active users are now 19,500.'],
  ['The feature flag is disabled.', 'The feature flag is enabled now.'],
  ['My brother works at Deloitte.', 'My brother joined McKinsey.'],
  ['The server runs on 4 cores.', 'We upgraded the server to 16 cores.'],
]
const THIRD_NON_UPDATES: Array<[string, string]> = [
  ['My gym membership is $40 per month.', 'The gym has a new sauna.'],
  ['I live in Austin.', 'Austin traffic was terrible this morning.'],
  ['My brother works at Deloitte.', 'I work at Deloitte too.'],
  ['The build takes 14 minutes.', 'The test suite takes 3 minutes.'],
  ['We deploy with Jenkins.', 'Jenkins has a new plugin for Slack.'],
]


/*
 * A fifth set, written after decision 0092's fixes to sentence ends after titles and to contracted
 * residence verbs (which the third set's two misses showed), and not used to change anything.
 */
const FIFTH_UPDATES: Array<[string, string]> = [
  ['My landlord is Mrs. Alvarez.', 'The building was sold, my landlord is now Mr. Chen.'],
  ["We're living in Porto.", "We're based in Madrid since the autumn."],
  ['The sprint review happens on Thursdays at 3pm.', 'The sprint review moved to 11am.'],
  ['My salary is $85,000.', 'After the raise my salary is $92,000.'],
  ['Our staging database is MongoDB.', 'We migrated staging from MongoDB to DynamoDB.'],
  ['The conference talk is 30 minutes long.', 'The organizers cut my talk to 20 minutes.'],
  ['My daughter is in second grade.', 'My daughter started third grade this week.'],
  ['The API key expires on December 1.', 'The API key now expires on January 15.'],
  ['I have 2 cats.', 'We adopted another one, so now I have 3 cats.'],
  ['Our newsletter has 4,200 subscribers.', 'The newsletter just passed 5,000 subscribers.'],
]
const FIFTH_NON_UPDATES: Array<[string, string]> = [
  ['My landlord is Mrs. Alvarez.', 'Mrs. Alvarez fixed the heating on Friday.'],
  ["We're living in Porto.", 'My parents are visiting Porto next month.'],
  ['My salary is $85,000.', "My partner's salary is $70,000."],
  ['I have 2 cats.', 'My neighbour has 4 cats.'],
  ['The API key expires on December 1.', 'The TLS certificate expires on March 3.'],
]

test('the changed-value rule on pairs written after it was frozen (reported, not tuned)', () => {
  for (const [name, updates, nonUpdates] of [['second', LATER_UPDATES, LATER_NON_UPDATES], ['third', THIRD_UPDATES, THIRD_NON_UPDATES], ['fifth', FIFTH_UPDATES, FIFTH_NON_UPDATES]] as const) {
    const { right, total, misses } = accuracy([...updates], [...nonUpdates])
    console.log(`value-change accuracy on the ${name} set ${right}/${total}${misses.length > 0 ? `\n${misses.join('\n')}` : ''}`)
    assert.ok(right >= total / 2, misses.join('\n'))
  }
})

/*
 * A fourth set, on the conditions a measured value is stated under (decision 0092): written before
 * the condition rule, from no benchmark. A value measured under one condition ("240 ms at 500
 * requests per second") is not replaced by the same measure under another ("610 ms at 2,000
 * requests per second"); the same condition, or a condition said on one side only, is a change.
 */
const CONDITION_UPDATES: Array<[string, string]> = [
  ['The p95 latency is 240 ms at 500 requests per second.', 'After the index fix the p95 latency is now 90 ms at 500 requests per second.'],
  ['The build takes 14 minutes on 4 cores.', 'The build now takes 9 minutes on 4 cores.'],
  ['The battery lasts 9 hours at 50% brightness.', 'With the new firmware the battery lasts 11 hours.'],
  ['The car gets 32 miles per gallon on the highway.', 'After the tune-up the car gets 36 miles per gallon on the highway.'],
  ['The query takes 800 ms on the 10 GB table.', 'With the new index the query takes 45 ms on the 10 GB table.'],
  ['My resting heart rate is 72 bpm.', 'My resting heart rate is down to 61 bpm.'],
  ['Our API allows 100 requests per minute per user.', 'The API now allows 300 requests per minute per user.'],
]
const CONDITION_NON_UPDATES: Array<[string, string]> = [
  ['The p95 latency is 240 ms at 500 requests per second.', 'The p95 latency is 610 ms at 2,000 requests per second.'],
  ['The build takes 14 minutes on 4 cores.', 'The build takes 5 minutes on 16 cores.'],
  ['The battery lasts 9 hours at 50% brightness.', 'The battery lasts 14 hours at 20% brightness.'],
  ['The query takes 800 ms on the 10 GB table.', 'The query takes 9 seconds on the 200 GB table.'],
  ['The roast needs 25 minutes at 180 degrees.', 'The roast needs 40 minutes at 150 degrees.'],
  ['The upload takes 3 minutes over a 100 Mbps link.', 'The upload takes 30 seconds over a 1 Gbps link.'],
]

test('a value measured under another condition is no change (decision 0092)', () => {
  const { right, total, misses } = accuracy(CONDITION_UPDATES, CONDITION_NON_UPDATES)
  console.log(`value-change accuracy on the conditions set ${right}/${total}${misses.length > 0 ? `\n${misses.join('\n')}` : ''}`)
  assert.ok(right / total >= 0.75, misses.join('\n'))
})

/* Written after the condition rule passed the set above, and not used to change it (reported). */
const FROZEN_CONDITION_UPDATES: Array<[string, string]> = [
  ['The dishwasher cycle takes 2 hours on the eco setting.', 'The dishwasher cycle now takes 90 minutes on the eco setting.'],
  ['Inference costs $0.40 per 1,000 requests.', 'Inference now costs $0.25 per 1,000 requests.'],
  ['Cold start takes 4 seconds on a 512 MB function.', 'Cold start now takes 1.5 seconds on a 512 MB function.'],
  ['The page loads in 3.2 seconds on a 3G connection.', 'The page now loads in 1.8 seconds.'],
]
const FROZEN_CONDITION_NON_UPDATES: Array<[string, string]> = [
  ['Cold start takes 4 seconds on a 512 MB function.', 'Cold start takes 900 ms on a 2 GB function.'],
  ['The page loads in 3.2 seconds on a 3G connection.', 'The page loads in 0.9 seconds on a 100 Mbps connection.'],
  ['Each worker handles 40 jobs per minute with 2 threads.', 'Each worker handles 110 jobs per minute with 8 threads.'],
  ['The pump moves 12 liters per minute at 2 bar.', 'The pump moves 7 liters per minute at 4 bar.'],
]

test('the condition rule on pairs written after it was frozen (reported, not tuned)', () => {
  const { right, total, misses } = accuracy(FROZEN_CONDITION_UPDATES, FROZEN_CONDITION_NON_UPDATES)
  console.log(`value-change accuracy on the frozen conditions set ${right}/${total}${misses.length > 0 ? `\n${misses.join('\n')}` : ''}`)
  assert.ok(right >= total / 2, misses.join('\n'))
})

test('a reading names the subject by structure and the value by type', () => {
  assert.deepEqual(valueReadings('My rent is now $1,450.'), [{ subject: ['rent'], type: 'money', value: '1450' }])
  const moved = valueReadings('I moved to Berlin.')
  assert.deepEqual(moved[0], { subject: ['i', 'residence'], type: 'name', value: 'berlin' })
  const switched = valueReadings('We switched the database from MySQL to PostgreSQL.')
  assert.ok(switched.some((r) => r.value === 'postgresql' && r.from === 'mysql' && r.subject.includes('databas')), JSON.stringify(switched))
  assert.deepEqual(valueReadings('I ran 5 km today.'), [], 'one occasion is an event, not a value')
  assert.deepEqual(valueReadings('Is my rent $1,200?'), [], 'a question states no value')
})

test('the same value said again is no change, nor is a later statement of an unrelated value', () => {
  assert.equal(changedValue(valueReadings('I live in Berlin.'), valueReadings('I still live in Berlin, near the park.')), undefined)
  assert.equal(changedValue(valueReadings('The API answers in 180 ms.'), valueReadings('Our rent is $1,800.')), undefined)
})
