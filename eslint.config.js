// Type-aware lint for the whole tree. Zero warnings are allowed (npm run lint).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Test-only files under src/: tests, and the fakes, fixtures and suites they share. */
const TEST_ONLY_FILES = [
  '**/*.test.ts', '**/testing.ts', '**/testing-*.ts', '**/fake-*.ts', '**/fakes.ts', '**/fixtures.ts', '**/test-helpers.ts',
  '**/behaviour.ts', '**/behaviour-*.ts', '**/conformance.ts', '**/conformance-*.ts',
];
/** An import of one of them (the last path segment, with or without .js). */
const TEST_ONLY_IMPORT =
  '(^|/)([^/]+\\.test|testing|testing-[^/]+|fake-[^/]+|fakes|fixtures|test-helpers|behaviour|behaviour-[^/]+|conformance|conformance-[^/]+)(\\.js)?$';

/** A last path segment that is a module's door: index, or a test-only entry (tests may use those). */
const DOOR = '(?!(index|testing|testing-[^/]+|fake-[^/]+|fakes|fixtures|test-helpers|behaviour|behaviour-[^/]+|conformance|conformance-[^/]+)(\\.js)?$)[^/]+$';
/** `up` levels up (no more), then at least `dirs` directories down to a file that is not a door. */
const pastTheDoor = (prefix, dirs) => ({
  regex: `^${prefix}([^./][^/]*/){${dirs},}${DOOR}`,
  message: "Import another module through its index.ts (or its testing.ts in tests), never one of its other files.",
});
const ups = (n) => '(\\.\\./)'.repeat(n);
/**
 * Where a file is, and the imports that leave its module past the door: from src/<top>/<module>/
 * one level up reaches a sibling module (1 directory to its file), two levels up another top
 * directory (2); from src/cmd and src/api files one level up reaches src itself; tests and
 * benchmarks reach src/<top>/<module>/.
 */
const DEPTHS = [
  { files: ['src/*/*.ts'], patterns: [pastTheDoor(ups(1), 2)] },
  { files: ['src/*/*/*.ts'], patterns: [pastTheDoor(ups(1), 1), pastTheDoor(ups(2), 2)] },
  { files: ['src/*/*/*/*.ts'], patterns: [pastTheDoor(ups(2), 1), pastTheDoor(ups(3), 2)] },
  { files: ['src/*/*/*/*/*.ts'], patterns: [pastTheDoor(ups(3), 1), pastTheDoor(ups(4), 2)] },
  { files: ['src/*/*/*/*/*/*.ts'], patterns: [pastTheDoor(ups(4), 1), pastTheDoor(ups(5), 2)] },
  { files: ['test/*/*.ts', 'bench/*/*.ts'], patterns: [pastTheDoor(`${ups(2)}src/`, 2)] },
  { files: ['bench/*.ts'], patterns: [pastTheDoor(`${ups(1)}src/`, 2)] },
];
const TEST_ONLY_PATTERN = {
  regex: TEST_ONLY_IMPORT,
  message: 'Production code must not import test-only code (fakes, fixtures, test suites, testing.ts entries).',
};
/** The console's page runs in the browser: no Node.js module. */
const NODE_PATTERN = { regex: '^node:', message: 'The console page runs in the browser: no Node.js module.' };
const CONSOLE_WEB = 'src/apiserver/console/web/**/*.ts';

function importRuleBlocks() {
  const rule = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
  return DEPTHS.flatMap(({ files, patterns }) => [
    // Tests and test-only files: the door rule.
    { files, rules: rule(patterns) },
    // Production code (under src/): the door rule, and no test-only code.
    ...files.filter((f) => f.startsWith('src/')).map((f) => ({ files: [f], ignores: TEST_ONLY_FILES, rules: rule([...patterns, TEST_ONLY_PATTERN]) })),
    // The console's page (production): neither, and no Node.js module.
    ...files.filter((f) => f.startsWith('src/')).map((f) => ({
      files: [[CONSOLE_WEB, f]], ignores: ['**/*.test.ts', '**/testing.ts'], rules: rule([...patterns, TEST_ONLY_PATTERN, NODE_PATTERN]),
    })),
  ]);
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: true }],
      'no-empty': ['error', { allowEmptyCatch: false }],
      eqeqeq: ['error', 'always'],
    },
  },
  // Each module's index.ts is its only door (and testing.ts its test-only one): an import that
  // leaves its module may not name another of its files. One block per directory depth, since a
  // relative path says how far up it goes; production files also may not import test-only code.
  ...importRuleBlocks(),
  {
    // The console's page runs in the browser: Node's modules (above) and globals are kept out of
    // it (its tsconfig carries Node types for the tests beside it only).
    files: [CONSOLE_WEB],
    ignores: ['**/*.test.ts', '**/testing.ts'],
    rules: {
      'no-restricted-globals': ['error', 'process', 'Buffer', 'require', 'module', '__dirname', '__filename', 'global'],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
