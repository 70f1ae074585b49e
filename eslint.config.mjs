// eslint for the conflict viewer's browser code (python/qrepl/services/viewer_assets/viewer.js).
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["python/qrepl/services/viewer_assets/**/*.js"],
    languageOptions: {
      ecmaVersion: 2020,
      sourceType: "script", // inlined into a classic <script> element
      globals: { ...globals.browser },
    },
    rules: {
      "no-var": "error",
      "prefer-const": "error",
      eqeqeq: ["error", "always"],
      curly: ["error", "multi-line"],
      "no-implicit-globals": "error",
      "no-unused-vars": ["error", { caughtErrors: "none" }],
    },
  },
];
