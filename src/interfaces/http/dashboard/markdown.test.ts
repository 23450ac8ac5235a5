/**
 * The dashboard's markdown (decision 0072): what memories are written in renders, and nothing a
 * stored text holds can become an element, an attribute or a script address.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { cutKeepingLines, markdown, markdownAsText } from './markdown.ts'

const render = (text: string): string => String(markdown(text))

describe('markdown for the dashboard', () => {
  test('headings, paragraphs, lists, quotes, code and emphasis render', () => {
    assert.equal(
      render('# Billing export\n\nThe **billing export** runs at `02:00`, _nightly_.\n\n- one\n- two\n\n1. first\n2. second\n\n> quoted\n\n```\na < b\n```'),
      '<div class="md"><p class="md-heading"><strong>Billing export</strong></p><p>The <strong>billing export</strong> runs at <code>02:00</code>, <em>nightly</em>.</p><ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol><blockquote><p>quoted</p></blockquote><pre><code>a &lt; b</code></pre></div>',
    )
  })

  test('stored markup is text: no element, no attribute, no script address', () => {
    const hostile = [
      '<script>alert(1)</script>',
      '<img src=x onerror="alert(1)">',
      '**<b onclick=alert(1)>x</b>**',
      '[x](javascript:alert(1))',
      '[x](https://ok.example/"onmouseover="alert(1))',
      '`</code><script>alert(1)</script>`',
      '<!-- episode {"a":1} -->',
      '# <svg onload=alert(1)>',
    ].join('\n\n')
    const html = render(hostile)
    // Every tag written is one of the renderer's own; every attribute one of its own three.
    for (const tag of html.matchAll(/<\/?([a-z0-9]+)([^>]*)>/gi)) {
      assert.ok(['div', 'p', 'strong', 'em', 'code', 'a', 'ul', 'ol', 'li', 'pre', 'blockquote', 'br'].includes(tag[1] ?? ''), `unexpected tag ${tag[0]}`)
      // Attributes as a browser reads them: name="value", a value holding no quote (it is escaped).
      const attributes = [...(tag[2] ?? '').matchAll(/\s([a-z-]+)="[^"]*"/gi)]
      assert.equal((tag[2] ?? '').replace(/\s([a-z-]+)="[^"]*"/gi, ''), '', `nothing but quoted attributes in ${tag[0]}`)
      for (const [, name] of attributes) assert.ok(['class', 'href', 'rel'].includes(name ?? ''), `unexpected attribute in ${tag[0]}`)
    }
    assert.doesNotMatch(html, /href="javascript:/)
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/)
    assert.match(html, /&lt;!-- episode \{&quot;a&quot;:1\} --&gt;/)
    // A web link is a link, its address escaped inside the attribute.
    assert.match(html, /<a href="https:\/\/ok\.example\/&quot;onmouseover=&quot;alert\(1" rel="nofollow noopener noreferrer">x<\/a>/)
  })

  test('snake_case and arithmetic stay as they are', () => {
    assert.equal(render('run snake_case_name with 2*3*4'), '<div class="md"><p>run snake_case_name with 2*3*4</p></div>')
  })

  test('as plain text for a label: the marks go, the words stay', () => {
    assert.equal(markdownAsText('# Billing export\nThe **export** runs at `02:00`; see [the wiki](https://w.example).'), 'Billing export\nThe export runs at 02:00; see the wiki (https://w.example).')
  })

  test('a long text is cut at a word, its lines kept', () => {
    assert.equal(cutKeepingLines('# Title\nfirst line of words\nsecond', 20), '# Title\nfirst line…')
    assert.equal(cutKeepingLines('short', 20), 'short')
  })
})
