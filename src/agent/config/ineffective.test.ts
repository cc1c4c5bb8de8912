import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultsOf } from './schema.js';
import { configurationSchema, type NodeagentConfiguration } from './types.js';
import { ineffectiveSettings } from './ineffective.js';

void describe('settings that cannot take effect', () => {
  void it('warn once each, naming the setting, only when set away from the default', () => {
    const c = defaultsOf(configurationSchema) as NodeagentConfiguration;
    assert.deepEqual(ineffectiveSettings(c), []);
    // volumePluginDir takes effect (FlexVolume drivers): no warning.
    assert.deepEqual(ineffectiveSettings({ ...c, volumePluginDir: '/opt/flex' }), []);
    const changed = { ...c, hairpinMode: 'hairpin-veth', makeIPTablesUtilChains: false };
    assert.deepEqual(ineffectiveSettings(changed), [
      'hairpinMode is accepted but has no effect on this node (the runtime\'s CNI configuration decides hairpin traffic): "hairpin-veth"',
      'makeIPTablesUtilChains is accepted but has no effect on this node (the agent manages no iptables chains): false',
    ]);
  });
});
