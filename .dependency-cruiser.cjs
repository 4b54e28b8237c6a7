/**
 * The import rules of src/ (docs/architecture.md): imports flow http → module services → module
 * repositories → db, with domain/ beneath everything; `npm run lint:imports` checks them in CI.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import circle, type-only imports included: the files in it cannot be understood, tested or loaded one at a time.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'modules-not-to-container',
      severity: 'error',
      comment: 'The container wires the modules; a module that imports it depends on every other module.',
      from: { path: '^src/modules/' },
      to: { path: '^src/container\\.ts$' },
    },
    {
      name: 'services-speak-the-domain',
      severity: 'error',
      comment: 'A service takes a scope and domain commands: no HTTP body schema, nothing under src/http/.',
      from: { path: '\\.service\\.ts$' },
      to: { path: ['\\.schemas\\.ts$', '^src/http/'] },
    },
    {
      name: 'other-modules-through-their-service',
      severity: 'error',
      comment: 'A module reaches another module through its service, never its repository.',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/.+\\.repo\\.ts$', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'domain-imports-nothing',
      severity: 'error',
      comment: 'src/domain/ is imported by all and imports nothing of Kosh outside itself.',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    includeOnly: '^src/',
  },
};
