// Lint: typescript-eslint's recommended rules over the sources, tests, benches and scripts.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'fixtures/', 'coverage/', 'demo-out/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      'no-control-regex': 'off',
    },
  },
  // The CommonJS entry (src/bin.cts): `import x = require()` is how TypeScript writes CommonJS.
  { files: ['**/*.cts'], rules: { '@typescript-eslint/no-require-imports': ['error', { allowAsImport: true }] } },
);
