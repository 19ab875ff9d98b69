// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.data/**',
      '.tools/**',
      '.stryker-tmp/**',
      'reports/**',
      'client/dist/**',
      'client/dist.next/**',
      'client/dist.old/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Only config modules may read the environment (docs/configuration.md).
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration through shared/config.' },
      ],
    },
  },
  {
    files: ['shared/config/**', 'scripts/**', 'test/**', '**/main.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unused-expressions': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
