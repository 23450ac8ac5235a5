/** Small vector and hashing helpers shared by the embedders. */

/** Scale `vector` in place to unit length; an all-zero vector is left as it is. Returns it. */
export function l2Normalize(vector: Float32Array): Float32Array {
  let sum = 0
  for (const value of vector) sum += value * value
  if (sum === 0) return vector
  const scale = 1 / Math.sqrt(sum)
  for (let index = 0; index < vector.length; index++) vector[index] = (vector[index] as number) * scale
  return vector
}

/** Cosine similarity of two vectors of the same length (the dot product when both are unit length). */
export function cosineSimilarity(left: Float32Array, right: Float32Array): number {
  let dot = 0
  let leftNorm = 0
  let rightNorm = 0
  for (let index = 0; index < left.length; index++) {
    const a = left[index] as number
    const b = right[index] as number
    dot += a * b
    leftNorm += a * a
    rightNorm += b * b
  }
  return leftNorm === 0 || rightNorm === 0 ? 0 : dot / Math.sqrt(leftNorm * rightNorm)
}

/**
 * 32-bit FNV-1a over the UTF-16 code units, finished with MurmurHash3's avalanche step so that
 * nearby strings (`cat`, `cau`) land far apart. Stable across runs, platforms and Node versions —
 * stored vectors depend on it, so changing it means a new embedder id.
 */
export function hashString(text: string, seed = 0): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index)
    hash = Math.imul(hash, 0x01000193)
  }
  hash ^= hash >>> 16
  hash = Math.imul(hash, 0x85ebca6b)
  hash ^= hash >>> 13
  hash = Math.imul(hash, 0xc2b2ae35)
  hash ^= hash >>> 16
  return hash >>> 0
}
