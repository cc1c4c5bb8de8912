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
  {
    // Production code imports no fake: fakes and suites live in test-only files (named as below),
    // reached through each module's test-only entry (testing.ts), never through its index.ts.
    files: ['src/**/*.ts'],
    ignores: TEST_ONLY_FILES,
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          regex: TEST_ONLY_IMPORT,
          message: 'Production code must not import test-only code (fakes, fixtures, test suites, testing.ts entries).',
        }],
      }],
    },
  },
  {
    // The console's page runs in the browser: Node's modules and globals are kept out of it
    // (its tsconfig carries Node types for the tests beside it only).
    files: ['src/apiserver/console/web/**/*.ts'],
    ignores: ['**/*.test.ts', '**/testing.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^node:', message: 'The console page runs in the browser: no Node.js module.' }] }],
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
