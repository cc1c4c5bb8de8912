/**
 * `compute` remembered per argument object, for objects that are never changed in place (a new
 * version is a new object, as with the agent's pods); forgotten with the object. A call that
 * throws is not remembered.
 */
export function memoizeByObject<K extends object, V>(compute: (key: K) => V): (key: K) => V {
  const known = new WeakMap<K, V>();
  return (key) => {
    if (known.has(key)) return known.get(key) as V;
    const value = compute(key);
    known.set(key, value);
    return value;
  };
}
