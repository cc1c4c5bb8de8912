import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IRequestOp, ITxnRequest, ITxnResponse } from 'etcd3';
import { OrchError } from '../../api/errors.js';
import { CreateGroup } from './etcd-create-group.js';
import type { CasResult } from './kv.js';

const put = (key: string): IRequestOp => ({ request_put: { key: Buffer.from(key), value: Buffer.from('{}') } });

function group(txn: (r: ITxnRequest) => Promise<ITxnResponse>, single: (key: string) => Promise<CasResult>): CreateGroup {
  return new CreateGroup({
    txn, single: (key) => single(key.toString()),
    record: (kv) => ({ key: kv.key.toString(), value: kv.value.toString(), modRevision: Number(kv.mod_revision) }),
  });
}

void describe('group commit of creates', () => {
  void it('sends concurrent creates as one transaction and answers each with its revision', async () => {
    const txns: number[] = [];
    const g = group((r) => { txns.push(r.success?.length ?? 0); return Promise.resolve({ succeeded: true, header: { revision: '42' }, responses: [] } as unknown as ITxnResponse); },
      () => Promise.reject(new Error('not alone')));
    const results = await Promise.all(['a', 'b', 'c'].map((k) => g.create(Buffer.from(k), put(k), 10)));
    assert.deepEqual(txns, [3]);
    assert.deepEqual(results, [{ ok: true, revision: 42 }, { ok: true, revision: 42 }, { ok: true, revision: 42 }]);
  });

  void it('answers the callers whose key exists and commits the others again together', async () => {
    let calls = 0;
    const g = group((r) => {
      calls += 1;
      if (calls === 1) {
        const kvs = (k: string) => (k === 'b' ? [{ key: Buffer.from('b'), value: Buffer.from('{"x":1}'), mod_revision: '7' }] : []);
        return Promise.resolve({ succeeded: false, header: { revision: '9' }, responses: (r.compare ?? []).map((c) => ({ response_range: { kvs: kvs(String(c.key)) } })) } as unknown as ITxnResponse);
      }
      return Promise.resolve({ succeeded: true, header: { revision: '10' }, responses: [] } as unknown as ITxnResponse);
    }, () => Promise.reject(new Error('not alone')));
    const results = await Promise.all(['a', 'b', 'c'].map((k) => g.create(Buffer.from(k), put(k), 10)));
    assert.deepEqual(results, [{ ok: true, revision: 10 }, { ok: false, current: { key: 'b', value: '{"x":1}', modRevision: 7 } }, { ok: true, revision: 10 }]);
  });

  void it('keeps errors per item: a rejection about one item sends each alone, an unavailable etcd fails them all', async () => {
    const lease = new OrchError('X', 'unavailable', 'etcdserver: requested lease not found');
    const alone = group(() => Promise.reject(lease), (k) => (k === 'b' ? Promise.reject(new Error('b failed')) : Promise.resolve({ ok: true, revision: 5 })));
    const mixed = await Promise.allSettled(['a', 'b'].map((k) => alone.create(Buffer.from(k), put(k), 10)));
    assert.equal(mixed[0]?.status, 'fulfilled');
    assert.equal(mixed[1]?.status === 'rejected' ? (mixed[1].reason as Error).message : '', 'b failed');
    const down = new OrchError('X', 'unavailable', 'etcd is down');
    const all = group(() => Promise.reject(down), () => Promise.reject(new Error('not alone')));
    const failed = await Promise.allSettled(['a', 'b'].map((k) => all.create(Buffer.from(k), put(k), 10)));
    assert.ok(failed.every((r) => r.status === 'rejected' && r.reason === down));
  });
});
