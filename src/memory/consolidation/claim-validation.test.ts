import assert from 'node:assert/strict'
import { test } from 'node:test'
import { judgeAgainstEpisodes } from './claim-validation.ts'
import type { EpisodeSource } from './episode-sources.ts'
import { factsAgree, unsupportedFacts } from './text-facts.ts'

const section = (text: string, day = '2026-03-02'): EpisodeSource => ({ id: 'x', owner: 'user:ada', day, heading: '14:30 — Conversation', text, resolved: [], ref: `episodes/${day}.md#14:30`, at: `${day}T14:30:00.000Z` })
const judge = (content: string, ...sources: string[]) => judgeAgainstEpisodes({ title: 'Fact', content }, sources.map((text) => section(text)))
const verdict = (content: string, ...sources: string[]): string => judge(content, ...sources).verdict

test('numbers in words and digits, with their units, are the same facts', () => {
  const source = 'ada: A staging deploy takes two hours. We keep twenty-five replicas and 1,000 jobs; the disk is 2.5 GB and 40% full; the budget is $40k.'
  for (const claim of ['A staging deploy takes about 2 hours.', 'A staging deploy takes 2 hrs.', 'A staging deploy takes 2h.', 'A staging deploy takes 120 minutes.', 'A two-hour deploy.', 'There are 25 replicas.', '1000 jobs.', 'one thousand jobs', '1k jobs', 'The disk is 2,5 GB.', 'The disk is 2500 MB.', 'It is 40 percent full.', 'The budget is 40,000 dollars.', 'The budget is 40 thousand USD.']) {
    assert.deepEqual(unsupportedFacts(claim, source), [], claim)
  }
  const wrongs: Array<[string, string]> = [
    ['A staging deploy takes 3 hours.', '3 hours'],
    ['A staging deploy takes 2 days.', '2 days'],
    ['There are 26 replicas.', '26'],
    ['The disk is 2.5 TB.', '2.5 TB'],
    ['The budget is $30k.', '$30k'],
    ['It runs on ec3.', 'ec3'],
  ]
  for (const [claim, wrong] of wrongs) {
    assert.deepEqual(unsupportedFacts(claim, `${source} It runs on ec2.`), [wrong], claim)
  }
  // Ambiguous and converted forms: every reading is tried.
  const forms: Array<[string, string]> = [
    ['It takes 5m.', 'it takes five minutes'],
    ['It raised $1.5M.', 'it raised 1.5 million dollars'],
    ['It takes 1.5 hours.', 'it takes 90 minutes'],
    ['It takes half an hour.', 'it takes 30 min'],
    ['Standup is at 10am.', 'standup is at 10:00'],
  ]
  for (const [claim, said] of forms) assert.deepEqual(unsupportedFacts(claim, said), [], claim)
  // A unit the other side leaves out still finds its number ("2 or 3 hours" states 2 hours).
  assert.deepEqual(unsupportedFacts('It takes 2 hours.', 'It takes 2 or 3 hours.'), [])
  assert.deepEqual(unsupportedFacts('It takes 2 hours.', 'It takes a couple of hours.'), [])
  // A figure only an article implies is no claim ("once a week" needs no "1 week" in the source).
  assert.deepEqual(unsupportedFacts('The backup runs once a week.', 'The backup runs every week.'), [])
})

test('dates in common forms are the same day; a different year or day is not', () => {
  const source = 'The release is on 2026-03-04 at 2:30 pm.'
  for (const claim of ['The release is on March 4.', 'The release is on March 4th, 2026.', 'The release is on 4 March 2026.', 'The release is on 3/4/2026.', 'The release is in March 2026.', 'The release is at 14:30.', 'It ships in 2026.']) {
    assert.deepEqual(unsupportedFacts(claim, source), [], claim)
  }
  assert.deepEqual(unsupportedFacts('The release is on March 5.', source), ['March 5'])
  assert.deepEqual(unsupportedFacts('The release is on March 4, 2025.', source), ['March 4, 2025'])
  assert.deepEqual(unsupportedFacts('The release is at 15:30.', source), ['15:30'])
  // A day given without a year supports the claim's year; the episode's own day counts ("today").
  assert.deepEqual(unsupportedFacts('Due March 4, 2026.', 'due on 4 March'), [])
  assert.equal(verdict('The export failed on March 2.', 'The nightly invoice export failed today.'), 'undecided', 'March 2 is the day of the episode: not an invented date')
  assert.equal(verdict('The export failed on March 9.', 'The nightly invoice export failed today.'), 'unsupported-facts')
  assert.equal(verdict('The export failed on Monday.', 'The nightly invoice export failed today.'), 'undecided', '2026-03-02 is a Monday')
  assert.equal(verdict('The export failed on Sunday, March 1.', 'The nightly invoice export failed yesterday.'), 'undecided')
  assert.equal(verdict('The export failed on Friday.', 'The nightly invoice export failed today.'), 'unsupported-facts')
})

test('names compare in any case and accent; an invented name is still caught', () => {
  assert.deepEqual(unsupportedFacts('We deploy with Kamal to Fly.io for Zoë.', 'we deploy with kamal to fly.io for zoe'), [])
  assert.deepEqual(unsupportedFacts('We deploy with Kamal to Heroku.', 'we deploy with kamal'), ['heroku'])
  // Capitals of style are not names: a Title Case title, a list item, emphasis.
  assert.deepEqual(unsupportedFacts('Staging Deploy Duration\n- Duration: about 2 hours\n**Typical** staging deploy takes 2 hours', 'a staging deploy takes two hours'), [])
  assert.deepEqual(unsupportedFacts('Hosting\nThe app runs on Heroku.', 'the app runs on fly'), ['heroku'])
  // The weekly merge's question: the same facts however written.
  assert.equal(factsAgree('The budget is 40k for Kamal.', 'the budget is 40,000 for kamal'), true)
  assert.equal(factsAgree('The budget is 40k.', 'The budget is 30k.'), false)
  assert.equal(factsAgree('A staging deploy takes two hours.', 'A staging deploy takes 2 hours.'), true)
  assert.equal(factsAgree('A staging deploy takes two hours.', 'A staging deploy takes 2 days.'), false)
})

test('a claim its source says outright is entailed; a paraphrase that adds or changes anything is not', () => {
  const source = 'ada: A staging deploy takes two hours. We deploy the staging server with Kamal. The nightly invoice export failed last night.'
  assert.equal(verdict('A staging deploy takes about 2 hours.', source), 'entailed')
  assert.equal(verdict('The staging server is deployed with Kamal.', source), 'entailed', 'a passive keeps the words')
  assert.equal(verdict('The nightly invoice export failed.', source), 'entailed')
  assert.equal(verdict('- A staging deploy takes 2 hours.\n- The nightly invoice export failed.', source), 'entailed', 'each sentence in some source sentence')
  assert.equal(verdict('## Staging Deploy Duration\n\nA **staging deploy** takes about 2 hours.', source), 'entailed', 'a heading is a label, not a claim')
  assert.equal(verdict('A staging deploy takes about 2 hours and needs approval.', source), 'undecided', 'a word the source never says')
  assert.equal(verdict('Deploys happen every morning before standup.', source), 'undecided')
  assert.equal(verdict('All staging deploys take 2 hours.', source), 'undecided', 'a quantifier the source never says')
  // Who did what to whom: order of names and figures.
  assert.equal(verdict('Ada reports to Bob.', 'Bob reports to Ada.'), 'undecided')
  assert.equal(verdict('The build takes 5 minutes and the deploy 10 minutes.', 'The deploy takes 5 minutes and the build 10 minutes.'), 'undecided')
  // A question, a guess, a plan or an attempt in the source entails nothing.
  assert.equal(verdict('The export failed.', 'Did the export fail?'), 'undecided')
  assert.equal(verdict('The staging server runs on Kamal.', 'Our staging server might run on Kamal.'), 'undecided')
  assert.equal(verdict('We deploy with Kamal.', 'We tried to deploy with Kamal.'), 'undecided')
  assert.equal(verdict('We deploy with Kamal.', 'We will deploy with Kamal next week.'), 'undecided')
  assert.equal(verdict('The export failed.', 'If the export failed, we rerun it.'), 'undecided')
  // A plan in a later clause leaves the statement before it standing.
  assert.equal(verdict('The nightly invoice export failed.', 'The nightly invoice export failed and we will rerun it tonight.'), 'entailed')
  assert.equal(verdict('The nightly invoice export succeeded.', 'The nightly invoice export failed, so we will rerun it.'), 'contradicted')
  // A negation elsewhere in the sentence does not reach the claim's words.
  assert.equal(verdict('Ada uses Kamal.', 'Ada uses Kamal, not Fly.io.'), 'entailed')
})

test('a claim its source says the opposite of is contradicted, without a new number', () => {
  const source = 'The nightly invoice export failed last night.'
  const judged = judge('The nightly invoice export succeeded.', source)
  assert.equal(judged.verdict, 'contradicted')
  assert.equal(judged.verdict === 'contradicted' && judged.sentence, source)
  assert.equal(verdict('The nightly invoice export did not fail.', source), 'contradicted', 'a negation on one side')
  assert.equal(verdict('The nightly invoice export job completed successfully.', source), 'contradicted', 'one word the source does not say, of five')
  assert.equal(verdict('The nightly invoice export succeeded.', 'A staging deploy takes two hours, and the nightly invoice export failed again.'), 'contradicted')
  assert.equal(verdict('The nightly invoice export succeeded.', "The nightly invoice export didn't succeed."), 'contradicted')
  assert.equal(verdict('The export is enabled.', 'The export is not enabled yet.'), 'contradicted')
  assert.equal(verdict('The feature flag is disabled.', 'The feature flag is enabled for everyone.'), 'contradicted')
  assert.equal(verdict('Ada uses Fly.io.', 'Ada uses Kamal, not Fly.io.'), 'contradicted')
  // Two flips cancel: "did not fail" against "succeeded" is for the model.
  assert.equal(verdict('The export succeeded.', 'The export did not fail.'), 'undecided')
  // A later state the sources also tell is no contradiction.
  assert.equal(verdict('The nightly invoice export succeeded after the retry.', 'The nightly invoice export failed. After a retry it succeeded.'), 'undecided')
  assert.equal(verdict('The nightly invoice export succeeded.', 'The nightly invoice export failed.', 'Later the nightly invoice export succeeded.'), 'entailed')
  // Something else failing is not this export's failure.
  assert.equal(verdict('The nightly invoice export succeeded.', 'The weekly payroll import failed.'), 'undecided')
  assert.equal(verdict('The export succeeded.', 'Did the export fail?'), 'undecided', 'a question contradicts nothing')
})

test('other languages: unknown words just do not match, digits and names still do', () => {
  assert.equal(verdict('Die Bereitstellung dauert 2 Stunden.', 'Die Bereitstellung dauert 2 Stunden.'), 'entailed')
  assert.equal(verdict('Die Bereitstellung dauert 2 Stunden.', 'Das Deployment braucht zwei Stunden.'), 'unsupported-facts', 'a capitalised noun the source lacks reads as a name')
  // The German table's number words are read (decision 0077): "zwei" states the 2, "drei" does not.
  assert.deepEqual(unsupportedFacts('Die Bereitstellung dauert 2 Stunden.', 'Die Bereitstellung dauert zwei Stunden.'), [])
  assert.deepEqual(unsupportedFacts('Die Bereitstellung dauert 2 Stunden.', 'Die Bereitstellung dauert drei Stunden.'), ['2'])
  assert.equal(verdict('Der Export ist nicht aktiviert.', 'Der Export ist aktiviert.'), 'contradicted')
  assert.equal(verdict('デプロイは2時間かかる。', 'デプロイは2時間かかる。'), 'entailed')
  // Numerals written as characters are read (decision 0077): 二時間 states the 2 of 2時間; 三時間 does
  // not. And the words of unspaced text are cut (decision 0076): デプロイ, 時間, かか meet, so the
  // claim is the source's said again.
  assert.equal(verdict('デプロイは2時間かかる。', 'デプロイには二時間かかります。'), 'entailed')
  assert.equal(verdict('デプロイは2時間かかる。', 'デプロイには三時間かかります。'), 'unsupported-facts')
  assert.equal(verdict('ステージングは速い。', 'デプロイは2時間かかる。'), 'undecided')
})
