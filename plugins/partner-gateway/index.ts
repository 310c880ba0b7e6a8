import { POLICIES } from '../../policies';

/**
 * The Express Gateway plugin of the Partner Gateway: registers our policies. Named in
 * config/system.config.yml; express-gateway loads it at start. A failure here is fatal: the boot
 * guard refuses to start when any plugin did not load.
 */
const plugin = {
  version: '1.2.0',
  policies: POLICIES.map((p) => p.name),
  schema: {
    $id: 'https://partner-gateway.dev/schemas/plugins/partner-gateway.json',
    type: 'object',
    description: 'Partner Gateway plugin settings (none yet).',
    properties: {},
  },
  init(context: { registerPolicy(policy: unknown): void }): void {
    // express-gateway wraps the registered object's `policy` in place: hand it a copy.
    for (const policy of POLICIES) context.registerPolicy({ ...policy });
  },
};

export = plugin;
