/**
 * The dashboard's one script, served from `/assets/dashboard.js` (the page's CSP allows scripts
 * from this server only, none inline). It turns buttons and forms into calls: a button with
 * `data-post="/v1/…"` and `data-body='{"…"}'` POSTs that JSON, a form with `data-post` its filled
 * fields as JSON (same origin, with the browser's session: at the browser's place the path reads
 * `/engram-<port>-<id>/v1/…`, decision 0051); then it goes to the answer's `next` page (a write's
 * "what changed", decision 0071) or reloads the page, or shows the error's message and fix beside
 * the button, announced to a screen reader (`role="alert"`). A page at its place
 * with a valid session names the place (`<meta name="engram-place">`); the script keeps it in this
 * origin's localStorage, where the landing page of a typed address finds it.
 */
import { PLACE_STORAGE_KEY } from '../browser-session.ts'

export const DASHBOARD_JS = `
const place = document.querySelector('meta[name="engram-place"]')?.getAttribute('content')
if (place) try { localStorage.setItem(${JSON.stringify(PLACE_STORAGE_KEY)}, place) } catch {}
async function send(url, body, button, out) {
  button.disabled = true
  out.className = 'result'
  out.setAttribute('role', 'alert')
  out.textContent = ''
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, credentials: 'same-origin' })
    const answer = await response.json().catch(() => ({ ok: false, error: { message: 'The server did not answer with JSON.', fix: 'reload the page' } }))
    if (answer.ok) {
      if (typeof answer.next === 'string' && answer.next.startsWith('/') && !answer.next.startsWith('//')) location.assign(answer.next)
      else location.reload()
      return
    }
    out.textContent = ' ' + answer.error.message + ' Fix: ' + answer.error.fix
    out.classList.add('warn')
  } catch (error) {
    out.textContent = ' ' + String(error)
    out.classList.add('warn')
  }
  button.disabled = false
}
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-post]') : null
  if (!button) return
  event.preventDefault()
  const out = button.parentElement.querySelector('.result') || button.insertAdjacentElement('afterend', document.createElement('span'))
  void send(button.dataset.post, button.dataset.body || '{}', button, out)
})
document.addEventListener('submit', (event) => {
  const form = event.target instanceof HTMLFormElement && event.target.dataset.post ? event.target : null
  if (!form) return
  event.preventDefault()
  const fields = {}
  for (const [name, value] of new FormData(form)) if (typeof value === 'string' && value.trim() !== '') fields[name] = value
  const button = form.querySelector('button[type=submit]') || form
  const out = form.querySelector('.result') || button.insertAdjacentElement('afterend', document.createElement('span'))
  void send(form.dataset.post, JSON.stringify(fields), button, out)
})
`
