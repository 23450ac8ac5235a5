/**
 * The dashboard's one script, served from `/assets/dashboard.js` (the page's CSP allows scripts
 * from this server only, none inline). It turns buttons into API calls: a button with
 * `data-post="/v1/…"` and `data-body='{"…"}'` POSTs that JSON (same origin, with the browser's
 * session: at the browser's place the path reads `/engram-<port>/v1/…`, decision 0051) and then
 * reloads the page, or shows the error's message and fix beside the button.
 */
export const DASHBOARD_JS = `
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
