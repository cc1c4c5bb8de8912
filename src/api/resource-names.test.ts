import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extendedResourceNameProblems, isExtendedResourceName } from './resource-names.js';

void describe('extended resource names', () => {
  void it('takes domain-prefixed names outside orch.io, as upstream takes them outside kubernetes.io', () => {
    for (const name of ['example.com/gpu', 'vendor.io/fpga-a_1', 'a.b/c.d']) assert.equal(isExtendedResourceName(name), true, name);
    assert.deepEqual(extendedResourceNameProblems('gpu'), ['must be a domain-prefixed name such as example.com/gpu']);
    assert.match(extendedResourceNameProblems('orch.io/dev')[0] ?? '', /orch.io namespace/);
    assert.match(extendedResourceNameProblems('nvidia.kubernetes.io/gpu')[0] ?? '', /kubernetes.io namespace/);
    assert.deepEqual(extendedResourceNameProblems('requests.example.com/x'), ['must not start with "requests."']);
    assert.deepEqual(extendedResourceNameProblems('example.com/a/b'), ["must have a single '/' between the domain and the name"]);
    assert.match(extendedResourceNameProblems('Example.com/gpu')[0] ?? '', /^domain must be a lowercase DNS-1123 subdomain/);
    assert.match(extendedResourceNameProblems('example.com/-gpu')[0] ?? '', /^name part must consist of/);
    assert.match(extendedResourceNameProblems(`${'a'.repeat(245)}/gpu`)[0] ?? '', /domain must be at most 244 characters/);
  });
});
