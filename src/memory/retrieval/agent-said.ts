/**
 * A question about what the agent itself said (decision 0079): "what was the hotel you
 * recommended?", "remind me what you suggested for the index", "your advice on the lease". The
 * agent's own messages are demoted in ranking (settings `agentMessageWeight`: what the user said is
 * the evidence, the agent's replies its conclusions) — except when the question is about those
 * replies: then they are the evidence. Recognised by its grammar, not its topic: "you" as the one
 * who said, told, recommended … (a verb of saying or advising, possibly after an auxiliary), or
 * "your" before what such a verb produces (a suggestion, an answer, an example …).
 */

// Verbs of saying, advising, showing, naming: said (past) or asked about with "did/have you …".
const SAID = '(?:said|told|mentioned|recommended|suggested|proposed|advised|explained|described|gave|given|wrote|written|provided|shared|listed|showed|shown|pointed out|called|named|picked|chose|chosen|came up with|offered|answered|replied|warned|noted)'
const SAY = '(?:say|tell|mention|recommend|suggest|propose|advise|explain|describe|give|write|provide|share|list|show|point out|call|name|pick|choose|come up with|offer|answer|reply|warn|note)'
// "you recommended", "you've suggested", "you just said"; "can you show me" is a request, not a question about what was said.
const YOU_SAID = new RegExp(`\\byou(?:['’](?:ve|d))?\\s+(?:(?:have|had|just|already|once|previously|earlier|originally|first|also)\\s+){0,2}${SAID}\\b`, 'i')
const DID_YOU_SAY = new RegExp(`\\b(?:did|have|had)\\s+you\\s+(?:(?:ever|already|once|just|previously|earlier|originally|first|also)\\s+)?${SAY}\\b`, 'i')
const YOUR_WORDS = /\byour\s+(?:(?:earlier|last|previous|first|original|own)\s+)?(?:suggestions?|recommendations?|advice|answers?|repl(?:y|ies)|responses?|explanations?|ideas?|examples?|tips?|proposals?|words|list|code|snippets?|script|solution|plan|summary|instructions?|steps|picks?|choices?)\b/i

/** Whether `question` asks about what the agent said (see the file comment). */
export function asksWhatTheAgentSaid(question: string): boolean {
  return YOU_SAID.test(question) || DID_YOU_SAY.test(question) || YOUR_WORDS.test(question)
}
