/**
 * The dashboard's one script, served from `/assets/dashboard.js` (the page's CSP allows scripts
 * from this server only, none inline). It turns buttons into API calls: a button with
 * `data-post="/v1/…"` and `data-body='{"…"}'` POSTs that JSON (same origin, with the browser's
 * session: at the browser's place the path reads `/engram-<port>-<id>/v1/…`, decision 0051) and then
 * reloads the page, or shows the error's message and fix beside the button. A page at its place
 * with a valid session names the place (`<meta name="engram-place">`); the script keeps it in this
 * origin's localStorage, where the landing page of a typed address finds it.
 */
import { PLACE_STORAGE_KEY } from '../browser-session.ts'

export const DASHBOARD_JS = `
const place = document.querySelector('meta[name="engram-place"]')?.getAttribute('content')
if (place) try { localStorage.setItem(${JSON.stringify(PLACE_STORAGE_KEY)}, place) } catch {}
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-post]') : null
  if (!button) return
  event.preventDefault()
  button.disabled = true
  const out = button.parentElement.querySelector('.result') || button.insertAdjacentElement('afterend', document.createElement('span'))
  out.className = 'result'
  try {
    const response = await fetch(button.dataset.post, { method: 'POST', headers: { 'content-type': 'application/json' }, body: button.dataset.body || '{}', credentials: 'same-origin' })
    const answer = await response.json().catch(() => ({ ok: false, error: { message: 'The server did not answer with JSON.', fix: 'reload the page' } }))
    if (answer.ok) { location.reload(); return }
    out.textContent = ' ' + answer.error.message + ' Fix: ' + answer.error.fix
    out.classList.add('warn')
  } catch (error) {
    out.textContent = ' ' + String(error)
    out.classList.add('warn')
  }
  button.disabled = false
})
`
