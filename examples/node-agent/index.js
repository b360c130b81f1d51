// An example agent in the production contract: the prompt arrives on stdin,
// the response goes to stdout, diagnostics to stderr. A real agent would
// call a model API here (with a key from --env-file) and use tools.
'use strict';

const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const prompt = Buffer.concat(chunks).toString('utf8').trim();
  const words = prompt.split(/\s+/).filter(Boolean);
  const response = {
    agent: 'node-agent',
    prompt,
    words: words.length,
    answer: `I read ${words.length} word(s). Reversed: ${words.reverse().join(' ')}`,
    node: process.version,
  };
  process.stdout.write(JSON.stringify(response) + '\n');
});
