/**
 * Reported events and settled facts of the user's world, offline (decision 0070): a first-person
 * declarative clause in the past ("I took a creative writing class last week"), the present perfect
 * ("I've configured AWS CloudTrail for audit logging"), an activity under way ("I'm using PostgreSQL
 * 15 with Prisma", "I've been studying ellipse basics"), a decision taken ("we decided to use Redis
 * for the cache"), a habit ("I play the guitar") and a fact of what is theirs ("my Flask app is
 * deployed on Fly.io", "my mom was interested in art").
 *
 * Precise rather than eager, as every rule here: each verb is one of a closed list whose sense is a
 * thing done or held, not a feeling ("I felt"), a try ("I tried"), a doubt ("I wondered"), a
 * perception ("I noticed", "I've heard") or a problem being asked about ("I'm getting an error");
 * an object that points into the conversation ("I made it") or holds the working of a problem
 * ("I got x = 3") is no fact. The caller has already dropped negated, hypothetical, quoted and
 * reported clauses and questions.
 *
 * Where they land: an event or a fact of the user's project is dated and may stop being true, so it
 * is a `lesson` of the user (their `lessons.md`, with its encoding day, recent first, forgotten by
 * use like every lesson) — the kind `mind.memories.add({ text })` gives a memory by default; a habit
 * and a relative's trait describe the person, so they are `profile` facts beside "The user loves
 * hiking".
 */
import { objectPhrase, sentence } from './object-phrase.ts'
import { withDate } from './when-said.ts'

/** A fact about the user's world or what they did, before it becomes an engram. */
export interface WorldFact {
  kind: 'profile' | 'lesson'
  text: string
}

const ADVERBS = '(?:(?:just|recently|finally|also|actually|already|even|then|first|successfully|now|currently|still|really|even)\\s+)*'

// Past forms of verbs of doing and undergoing. Not: felt, thought, knew, saw, heard, found, tried,
// wanted, needed, hoped, wondered, noticed, realized, guessed, meant, loved, liked, enjoyed (a
// reaction to the moment), told, said, asked (reported speech), checked, applied, followed, solved,
// calculated (the working of a problem).
const IRREGULAR_PAST = 'watched|made|went|took|got|won|met|spent|did|began|bought|built|brought|gave|held|lost|ran|sang|sold|sent|set|taught|wrote|drove|flew|rode|chose|broke|caught|fell|grew|led|paid|quit|sat|slept|stood|threw|wore|became|swam|drew|hit'
const REGULAR_PAST = 'started|finished|completed|joined|visited|adopted|moved|signed up|volunteered|attended|participated|organized|organised|hosted|launched|released|published|deployed|migrated|switched|upgraded|installed|configured|implemented|added|created|designed|developed|integrated|enabled|reduced|improved|increased|optimized|optimised|documented|raised|celebrated|graduated|passed|learned|learnt|picked|received|earned|opened|painted|baked|cooked|traveled|travelled|hiked|camped|climbed|competed|performed|played|practiced|practised|recorded|booked|ordered|planted|renovated|rescued|donated|decided|chose|opted|settled|planned|managed to|achieved|reached|scored|hit|cut|refactored|replaced|upgraded|used|applied for|signed|submitted|wrapped up|set up|tested|trained|studied|explored|reviewed|replaced|went with'
const PAST = new RegExp(`^(I|we) ${ADVERBS}(${REGULAR_PAST}|${IRREGULAR_PAST}) (.+)$`, 'i')

// The present perfect: "I've configured …", "we have migrated …".
const PARTICIPLE = REGULAR_PAST.replace(/\|(?:chose|used|hit|cut|applied for|signed|went with|ended up)\b/g, '') + '|made|taken|gotten|won|met|spent|done|begun|bought|built|brought|written|sold|sent|set|taught|chosen|grown|led|paid|become|drawn|cut|used|switched to|moved to|gone with|scheduled'
const PERFECT = new RegExp(`^(I|we)(?:['’]ve| have) ${ADVERBS}(${PARTICIPLE}) (.+)$`, 'i')

// An activity under way or long kept up: "I've been studying …", "I'm using …".
const ONGOING = 'studying|practicing|practising|working on|working with|using|learning|exploring|reading|focusing on|building|developing|running|writing|training for|training|taking|playing|volunteering|teaching|preparing for|reviewing|implementing|integrating|tracking|saving for|saving|painting|cooking|baking|collecting|attending|hosting|organizing|organising|coaching|deploying|migrating|hardening|setting up|aiming for|aiming to|targeting|going to|analyzing|analysing|investigating|researching|experimenting with|benchmarking|profiling|refining|tuning|fine-tuning|optimizing|optimising|improving|designing|creating|testing|documenting|upgrading|rehearsing|trying out|looking into|watching|enforcing|exploring'
// A plan the user states as theirs ("I'm planning to use Redis pub/sub channels", "I plan to solve
// 10 problems in two weeks"); one they only weigh ("I'm thinking of", "I'm considering") is no fact.
// A past habit or state: "I used to go horseback riding with my dad", "I used to have a dog".
const USED_TO = /^I used to ((?:[a-z]+) .+)$/i
const PLAN = /^(I|we)(?:['’]m|['’]re| am| are)? (?:also |currently |now |still )?(planning|plan) (to|on) (.+)$/i
// Trying to build something with a named version of a tool says the tool is the user's ("I'm trying
// to implement user authentication using PyJWT v2.7.0"); trying to fix or understand something is
// the problem being asked about, not a fact.
const BUILD = 'implement|integrate|build|set up|deploy|configure|migrate|containerize|automate|add|create|develop'
const ATTEMPT = new RegExp(`^I(?:['’]m| am|['’]ve been| have been) (?:currently |still |also )?trying to (${BUILD}) (.+)$`, 'i')
export const VERSIONED = /\b[A-Za-z][\w.+#-]*\s+v?\d+\.\d+(?:\.\d+)?\b|\bv\d+(?:\.\d+)*\b/
export const NAMED_ATTEMPT = new RegExp(`\\btrying to (?:${BUILD})\\b.*(?:${VERSIONED.source})`, 'i')
const BEEN = new RegExp(`^I(?:['’]ve| have) ${ADVERBS}been ${ADVERBS}(${ONGOING}) (.+)$`, 'i')
const UNDER_WAY = new RegExp(`^(I|we)(?:['’]m|['’]re| am| are) ${ADVERBS}(${ONGOING}) (.+)$`, 'i')

// What the user keeps doing (a habit: their profile) or keeps using (a tool: their project).
const TOOL_VERBS = 'use|run|deploy|host|store'
const HABIT_VERBS = 'play|practice|practise|teach|volunteer|attend|train|paint|bake|collect|coach|hike|swim|knit|garden|surf|climb|ski|meditate|go to'
const PRESENT = new RegExp(`^(I|we) (?:also |usually |often |always |regularly |mostly |now |currently )?(${TOOL_VERBS}|${HABIT_VERBS}) (.+)$`, 'i')

// "I was able to jog a bit with no pain", "I was diagnosed with asthma", "I got promoted".
const UNDERGONE = /^I (was|got) (?:just |recently |finally |also )?(able to|diagnosed with|promoted to|promoted|accepted into|accepted to|hired by|hired as|hired|offered|invited to|selected for|awarded|married|engaged|elected)\b ?(.*)$/i

// What the user has ahead or holds: "I've got a gaming tournament next month", "I have an exam on Friday".
const HAVE_EVENT = /^(I|we)(?: |(?=['’]))(have|['’]ve got|have got|got|had|just had|recently had) ((?:an?|my|our|another) (?:(?!(?:from|of|about|with|for|to|in|on)\b)[\w-]+ ){0,3}(?:tournament|exam|final|midterm|test|quiz|deadline|interview|meeting|demo|presentation|appointment|competition|match|race|marathon|concert|show|gig|recital|trip|flight|wedding|party|event|launch|release|surgery|check-up|checkup|conference|workshop|audition|game|sprint|review|vacation|holiday|backend|frontend|app|server|setup|database|pipeline)s?(?:\s+(?:of|on|at|in|by|next|this|tomorrow|tonight|later|coming|for|with|last|yesterday|today|soon|planned|scheduled|that|which|to)\b.*)?)$/i

// What is the user's: "my Flask app is deployed on Fly.io", "my quiz score is 85%", "My goal is to …".
const THING = '(?:app|application|api|backend|frontend|server|website|site|project|database|db|service|model|pipeline|stack|cluster|instance|setup|repo|repository|team|company|startup|business|studio|shop|store|class|course|exam|test|quiz|score|grade|gpa|goal|target|deadline|budget|thesis|book|blog|channel|podcast|garden|house|apartment|flat|car|bike|laptop|phone|computer|job|internship|degree|major)'
const MY_THING = new RegExp(`^my ((?:[A-Za-z0-9][\\w.+#/-]*\\s+){0,4}?${THING}s?)(?:,? which)? ${ADVERBS}(is|are|was|were|runs|uses|has|handles|serves|scored|costs|takes|holds|improved|increased|dropped|rose|grew|reached|went up|went down) (.+)$`, 'i')
const RELATIVE = '(?:mom|mum|mother|dad|father|parents|grandma|grandmother|granny|grandpa|grandfather|grandparents|brother|sister|son|daughter|kids|children|husband|wife|partner|boyfriend|girlfriend|fiancé|fiancée|fiance|fiancee|uncle|aunt|cousin|family|dog|cat|pup|puppy)'
const MY_RELATIVE = new RegExp(`^my ${RELATIVE} (was|were) (.+)$`, 'i')

// A feeling, or a reaction to what was said, is no trait ("my dad was so proud", "my mom was thrilled").
const FEELING = /^(?:so|really|very|super|quite|pretty|too|such|a bit|kind of|kinda|totally|absolutely)?\s*(?:more|less|much|happy|sad|glad|thrilled|excited|proud|upset|angry|mad|worried|nervous|scared|afraid|surprised|shocked|amazed|impressed|disappointed|annoyed|tired|exhausted|stressed|relieved|grateful|thankful|touched|moved|overjoyed|ecstatic|delighted|pleased|stoked|bummed|right|wrong|fine|okay|ok|there|here|great|awesome|amazing|cool|nice|good|bad|fun|funny|cute|sweet|lovely)\b/i

// The working of a problem, or the problem itself, is no fact of the user's world: an equation, a
// formula, an error ("I got x = 3", "I got a 400 error", "my app is crashing").
const PROBLEM = /[=^\\√≤≥∑∫]|\$(?!\d)|\(\s*[−-]?\d|\bthe following\b|\b(?:below|above)$|\b[a-z]\s*[+\-*/]\s*[a-z0-9]\b|\b(?:errors?(?! (?:handling|handler|handlers|middleware|logging|tracking|reporting|boundary|boundaries|monitoring|budget|responses?|pages?|codes?|rates?))|exception|bug|bugs|problem|problems|mistake|mistakes|crash|crashes|crashing|failing|fails|failed|failure|stuck|wrong|slow|broken|leak|leaks|leaking|timeout|warning|warnings|trouble|confused|confusing|question|questions)\b|(?<!\bto )\bissues?\b/i
// Objects that are no thing done: "I set it", "I made sure", "I got to …", "I went ahead", "I ran into".
const NOT_A_THING = /^(?:and|or|as per|in version|similar|so close|close|the time to|an? (?:surge|rush|wave|boost|burst|sense) of|a (?:feeling|question|thought|doubt|hard time|tough time|rough time|look|go)|an idea|sure|ahead|back|through|into|over|up with|around|out of|out|a look|a chance|to know|to see|to think|to wonder|the following|the code|some code|my code|the same|the hang of|a feeling|a sense|a lot|a ton|a bit|lucky|the idea|a kick out of|the impression|something|anything|everything|nothing|some progress|progress|some (?:[a-z]+ )?(?:things?|stuff|resources|help|changes|modifications|research|tips|advice|steps|work)|one good thing|for a while|for a bit|for some time|my (?:steps|work|solution|answer|calculations?|best)|(?:relax|rest|sleep|bed)\b)/i
// "The" with a few words names what the conversation is about ("I used the power rule", "I've
// completed the base case"): which one, the clause alone does not say. A name or a number says it.
const DEFINITE_SHORT = /^the (?:[a-z-]+ ){0,2}[a-z-]+$/

const WE = (subject: string): string => (subject.toLowerCase() === 'we' ? 'The user and others' : 'The user')

/** "My girlfriend and I went …" is the user's doing with them: read as "we", said as "The user and their girlfriend". */
const WITH_SOMEONE = /^my ((?:[a-z]+ ){0,2}[a-z]+) and I\b/i

function thing(raw: string, maxWords: number, definite = false): string | undefined {
  if (NOT_A_THING.test(raw.trim())) return undefined
  // A purpose or relative clause that points into the conversation ("joined a dog owners group to
  // learn how to take care of them") is cut; the thing done before it stands on its own.
  const whole = objectPhrase(raw, maxWords)
  const head = / (?:to|who|that|so that|because|while) /.exec(raw)
  const before = head ? raw.slice(0, head.index) : ''
  const value = whole ?? (before.split(' ').length >= 2 && !/\b(?:how|what|similar|close|able|way|used|due|next|according|so|too|going)$/i.test(before) ? objectPhrase(before, maxWords) : undefined)
  // A bracket left open is an object cut at a comma inside it ("getRecentMessages(roomId").
  if (value !== undefined && (PROBLEM.test(value) || value.split('(').length !== value.split(')').length)) return undefined
  // An object cut short ("a library for `x`" without its code) says nothing whole.
  return value === undefined || (!definite && DEFINITE_SHORT.test(value)) || /\b(?:for|to|with|of|in|on|at|from|by|about|like|the|a|an|and|or)$/i.test(value) ? undefined : value
}

/** Third person of a verb said in the present ("use" → "uses", "go to" → "goes to"). */
function present(verb: string): string {
  const [head = verb, ...rest] = verb.split(' ')
  const conjugated = /(?:s|sh|ch|x|z|o)$/.test(head) ? `${head}es` : /[^aeiou]y$/.test(head) ? `${head.slice(0, -1)}ies` : `${head}s`
  return [conjugated, ...rest].join(' ')
}

/** The adverbs the user put before the verb ("I've just been practicing" → "just "), "been" left out. */
const adverbsOf = (clause: string, verb: string): string => {
  const before = clause.slice(0, clause.toLowerCase().indexOf(verb.toLowerCase())).replace(/^(?:I|we)(?:['’](?:ve|m|re)| have| am| are)?\s*/i, '').replace(/\bbeen\s*/i, '')
  return before.trim() === '' ? '' : `${before.trim().toLowerCase()} `
}

/**
 * What one first-person clause reports of the user's doings or world, if it is one plain fact.
 * `when` is a time phrase said before the clause ("Last Friday, I …"), kept with the fact; `at`,
 * when the turn has one, resolves it to a date.
 */
export function worldFactOf(said: string, when: string | undefined, at: Date | undefined): WorldFact | undefined {
  const companion = WITH_SOMEONE.exec(said)?.[1]
  const fact = worldFactOfClause(companion ? said.replace(WITH_SOMEONE, 'we') : said, when, at)
  return fact && companion ? { ...fact, text: fact.text.replace(/^The user and others\b/, `The user and their ${companion.toLowerCase()}`) } : fact
}

function worldFactOfClause(clause: string, when: string | undefined, at: Date | undefined): WorldFact | undefined {
  const phrase = when === undefined ? undefined : `${when.charAt(0).toLowerCase()}${when.slice(1)}`
  const dated = (text: string): string => sentence(withDate(phrase ? `${text.replace(/[.!]+$/, '')} ${phrase}` : text, at))
  const undergone = UNDERGONE.exec(clause)
  if (undergone?.[1] && undergone[2]) {
    const rest = undergone[3] ?? ''
    const value = rest === '' ? '' : thing(rest, 16)
    if (value === undefined || (value === '' && /(?:to|with|into|by|for)$/.test(undergone[2]))) return undefined
    return { kind: 'lesson', text: dated(`The user ${undergone[1].toLowerCase()} ${undergone[2].toLowerCase()}${value === '' ? '' : ` ${value}`}`) }
  }
  const past = USED_TO.exec(clause)
  if (past?.[1]) {
    const value = thing(past[1], 14)
    return value === undefined ? undefined : { kind: 'profile', text: sentence(`The user used to ${value}`) }
  }
  const plan = PLAN.exec(clause)
  if (plan?.[1] && plan[2] && plan[3] && plan[4]) {
    const value = thing(plan[4], 18)
    if (value === undefined) return undefined
    const we = plan[1].toLowerCase() === 'we'
    const verb = plan[2].toLowerCase() === 'planning' ? `${we ? 'are' : 'is'} planning` : we ? 'plan' : 'plans'
    return { kind: 'lesson', text: dated(`${WE(plan[1])} ${verb} ${plan[3].toLowerCase()} ${value}`) }
  }
  const attempt = ATTEMPT.exec(clause)
  if (attempt?.[1] && attempt[2]) {
    const value = VERSIONED.test(attempt[2]) ? thing(attempt[2], 20) : undefined
    const tense = /^I(?:['’]ve| have)/i.test(clause) ? 'has been' : 'is'
    return value === undefined ? undefined : { kind: 'lesson', text: dated(`The user ${tense} trying to ${attempt[1].toLowerCase()} ${value}`) }
  }
  for (const [pattern, tense] of [
    [PERFECT, 'has'],
    [BEEN, 'has been'],
    [UNDER_WAY, 'is'],
    [PAST, ''],
  ] as const) {
    const match = pattern.exec(clause)
    if (!match) continue
    const subject = pattern === BEEN ? 'I' : (match[1] ?? 'I')
    const verb = (pattern === BEEN ? match[1] : match[2]) ?? ''
    const object = (pattern === BEEN ? match[2] : match[3]) ?? ''
    // "I got 11 minutes", "I got 2522": a number got is a problem's answer; "I'm running behind",
    // "I use for …": no thing is named.
    const value = (/^got$/i.test(verb) && /^-?\d/.test(object)) || (/^(?:us|run)/i.test(verb) && /^(?:for|behind|into|out|late|low|short|on|with)\b/i.test(object)) ? undefined : thing(object, 18)
    if (value === undefined) return undefined
    const we = subject.toLowerCase() === 'we'
    const adverbs = adverbsOf(clause, verb)
    // "has just been practicing", "are now using": the adverbs after the first auxiliary, as said.
    const said = tense === '' ? adverbs : tense === 'has been' ? `${we ? 'have' : 'has'} ${adverbs}been ` : `${we ? tense.replace(/^has/, 'have').replace(/^is/, 'are') : tense} ${adverbs}`
    return { kind: 'lesson', text: dated(`${WE(subject)} ${said}${verb.toLowerCase()} ${value}`) }
  }
  const ahead = HAVE_EVENT.exec(clause)
  if (ahead?.[1] && ahead[2] && ahead[3]) {
    const value = thing(ahead[3], 16)
    const verb = /had$/i.test(ahead[2]) ? ahead[2].toLowerCase() : ahead[1].toLowerCase() === 'we' ? 'have' : 'has'
    return value === undefined ? undefined : { kind: 'lesson', text: dated(`${WE(ahead[1])} ${verb} ${value}`) }
  }
  const habit = PRESENT.exec(clause)
  if (habit?.[1] && habit[2] && habit[3]) {
    const verb = habit[2].toLowerCase()
    const kind = new RegExp(`^(?:${TOOL_VERBS})$`).test(verb) ? 'lesson' : 'profile'
    // A habit may name its thing with "the" ("I play the drums"); a tool so named is one from the conversation.
    const value = /^(?:for|behind|into|out|late|low|short|on|with)\b/i.test(habit[3]) ? undefined : thing(habit[3], 14, kind === 'profile')
    if (value === undefined) return undefined
    const text = habit[1].toLowerCase() === 'we' ? `The user and others ${verb} ${value}` : `The user ${adverbsOf(clause, habit[2])}${present(verb)} ${value}`
    return { kind, text: kind === 'lesson' ? dated(text) : sentence(text) }
  }
  const mine = MY_THING.exec(clause)
  if (mine?.[1] && mine[2] && mine[3]) {
    if (FEELING.test(mine[3]) || PROBLEM.test(mine[3])) return undefined
    const what = objectPhrase(mine[1], 6)
    const value = thing(mine[3], 18)
    if (what === undefined || value === undefined) return undefined
    return { kind: 'lesson', text: dated(`The user's ${what} ${adverbsOf(clause.slice(clause.indexOf(mine[1]) + mine[1].length).replace(/^,?\s*which\s*/i, ''), mine[2])}${mine[2].toLowerCase()} ${value}`) }
  }
  const relative = MY_RELATIVE.exec(clause)
  if (relative?.[1] && relative[2]) {
    if (FEELING.test(relative[2])) return undefined
    const value = thing(relative[2], 10)
    if (value === undefined) return undefined
    const who = /^my (\S+)/i.exec(clause)?.[1]?.toLowerCase() ?? ''
    return { kind: 'profile', text: sentence(`The user's ${who} ${relative[1].toLowerCase()} ${value}`) }
  }
  return undefined
}

// A tool named with what is the user's, in passing: "… in my Flask app", "my React frontend", "my
// PostgreSQL database": the user has one. The name is a capitalised or versioned word, so "my new
// app" or "my current code" say nothing of the kind.
const NAMED_THING = /\bmy ((?:[A-Z][\w.+#-]*[A-Za-z0-9]|[a-z][\w.+#-]*\d[\w.+#-]*|[a-z]+\.js)(?: (?:[A-Z][\w.+#-]*[A-Za-z0-9]|v?\d[\w.]*))*) (app|application|frontend|backend|server|database|db|instance|cluster|api|API|website|site|project|model|pipeline|service|container|client|bot|dashboard|stack|setup)\b(?![-.]\w|\s+(?:integrations?|calls?|requests?|keys?|credentials|usage|access|rate|limits?|endpoints?|tokens?|wrapper|versions?|documentation|docs|account|quota|responses?|errors?|data|connections?|quer(?:y|ies)|logs?|configuration|config|settings|code|tests?|performance|layer|features?|routes?)\b)/g
const NOT_A_NAME = /^(?:I|My|The|This|That|Current|New|Old|Main|Own|First|Next|Final|Whole|Entire|Simple|Basic|Local|Personal|Little|Big)$/

/** The user's named tools said in passing in `sentence` ("… my Flask app, …" → "The user has a Flask app."). */
export function namedThingsOf(sentence: string): WorldFact[] {
  const facts: WorldFact[] = []
  for (const match of sentence.matchAll(NAMED_THING)) {
    const name = match[1] ?? ''
    const what = (match[2] ?? '').replace(/^api$/i, 'API')
    if (NOT_A_NAME.test(name.split(' ')[0] ?? '')) continue
    const article = /^[AEIOaeio]/.test(name) ? 'an' : 'a'
    facts.push({ kind: 'lesson', text: `The user has ${article} ${name} ${what}.` })
  }
  return facts
}
