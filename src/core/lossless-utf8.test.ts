import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { decodeUtf8Lossless, encodeUtf8Lossless, hasUndecodableBytes, wellFormed } from './lossless-utf8.ts'

describe('lossless UTF-8', () => {
  test('valid UTF-8 decodes as Node decodes it, byte-order mark included, and has no escaped bytes', () => {
    const text = '\uFEFF# Rules\n- Brew at 80°C 🍵\n'
    const bytes = Buffer.from(text, 'utf8')
    assert.equal(decodeUtf8Lossless(bytes), text)
    assert.equal(hasUndecodableBytes(decodeUtf8Lossless(bytes)), false)
    assert.deepEqual(encodeUtf8Lossless(text), bytes)
  })

  test('any bytes come back exactly: Latin-1, cut sequences, surrogates, overlongs, random', () => {
    const cases = [
      Buffer.from('caf\xe9 au lait\n', 'latin1'),
      Buffer.concat([Buffer.from('- cut: '), Buffer.from('€', 'utf8').subarray(0, 2)]),
      Buffer.from([0xed, 0xa0, 0x80, 0x41]), // an encoded surrogate
      Buffer.from([0xc0, 0xaf, 0xe0, 0x80, 0xaf]), // overlong slashes
      Buffer.from([0xf4, 0x90, 0x80, 0x80]), // above U+10FFFF
      Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0x80]),
    ]
    let seed = 7
    for (let n = 0; n < 200; n++) {
      const bytes = Buffer.alloc(1 + (n % 64))
      for (let i = 0; i < bytes.length; i++) {
        seed = (seed * 1103515245 + 12345) >>> 0
        bytes[i] = seed >>> 24
      }
      cases.push(bytes)
    }
    const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
    for (const bytes of cases) {
      assert.deepEqual(encodeUtf8Lossless(decodeUtf8Lossless(bytes)), bytes, bytes.toString('hex'))
      // Where the WHATWG fatal decoder accepts the bytes, the text is exactly its text, and nothing is escaped.
      let valid: string | undefined
      try {
        valid = fatal.decode(bytes)
      } catch {}
      if (valid !== undefined) assert.equal(decodeUtf8Lossless(bytes), valid, bytes.toString('hex'))
      assert.equal(hasUndecodableBytes(decodeUtf8Lossless(bytes)), valid === undefined, bytes.toString('hex'))
    }
    assert.equal(hasUndecodableBytes(decodeUtf8Lossless(Buffer.from('caf\xe9', 'latin1'))), true)
  })

  test('text handed to a writer is made well-formed: no lone surrogate can pass for an escaped byte', () => {
    assert.equal(wellFormed('a\udc80b\ud800'), 'a\ufffdb\ufffd')
    assert.equal(wellFormed('tea 🍵'), 'tea 🍵')
  })
})
