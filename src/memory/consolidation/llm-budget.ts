/**
 * Bounded cost (decision 0031): one consolidation run may make at most so many model calls and spend
 * at most so many tokens (`consolidation.llmCalls`, `consolidation.llmTokens`). Tokens are
 * counted as engram counts them (the prompt sent and the answer received); a call that would go
 * over either bound is not made: `BudgetExhausted` is thrown and the run leaves what is left for
 * the next one, saying so.
 */
import { countTokens } from '../../core/tokens.ts'
import type { GenerateObjectOptions, Llm } from '../../llm/contracts.ts'

export interface LlmBudget {
  calls: number
  tokens: number
}

export class BudgetExhausted extends Error {
  readonly budget: LlmBudget
  constructor(budget: LlmBudget) {
    super(`the run's model budget is spent (${budget.calls} calls, ${budget.tokens} tokens; consolidation.llmCalls, consolidation.llmTokens)`)
    this.budget = budget
  }
}

export interface BudgetedLlm {
  readonly model: string | undefined
  generateObject<T>(options: GenerateObjectOptions<T>): Promise<T>
  used(): LlmBudget
}

export function budgetedLlm(llm: Llm, budget: LlmBudget): BudgetedLlm {
  let calls = 0
  let tokens = 0
  return {
    model: llm.modelFor('planning'),
    async generateObject<T>(options: GenerateObjectOptions<T>): Promise<T> {
      const prompt = countTokens([options.system ?? '', ...options.messages.map((message) => message.content)].join('\n'))
      if (calls + 1 > budget.calls || tokens + prompt > budget.tokens) throw new BudgetExhausted(budget)
      calls++
      tokens += prompt
      const answer = await llm.generateObject({ tier: 'planning', ...options })
      tokens += countTokens(JSON.stringify(answer) ?? '')
      return answer
    },
    used: () => ({ calls, tokens }),
  }
}
