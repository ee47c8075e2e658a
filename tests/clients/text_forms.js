// Reads tests/data/text_forms.json and prints, as JSON, what the Node recipe's canonical()
// makes of every input: {"input", "canonical"} or {"input", "error"}. Run by
// tests/clients/test_text_forms.py, which compares it with the file.
'use strict';
const fs = require('fs');
const path = require('path');
const { canonical } = require(path.join(__dirname, '..', '..', 'clients', 'node', 'hlculid.js'));

const doc = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'data', 'text_forms.json'), 'utf8'));
const out = [...doc.accepted, ...doc.rejected].map(({ input }) => {
  try {
    return { input, canonical: canonical(input) };
  } catch (e) {
    return { input, error: e.message };
  }
});
process.stdout.write(JSON.stringify(out));
