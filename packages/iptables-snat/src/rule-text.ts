/**
 * Joins rule tokens into the text `iptables-save` prints: a token with spaces, quotes or backslashes is
 * double-quoted with `"` and `\` escaped. Tokens reaching here are validated, so only comments are quoted.
 */
export function joinRuleTokens(tokens: readonly string[]): string {
  return tokens
    .map((token) =>
      token === '' || /[\s"\\']/.test(token) ? `"${token.replace(/(["\\])/g, '\\$1')}"` : token,
    )
    .join(' ');
}

/** Splits rule text as `iptables-save` prints it back into tokens (the inverse of {@link joinRuleTokens}). */
export function splitRuleTokens(text: string): string[] | undefined {
  const tokens: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === ' ' || text[i] === '\t') {
      i++;
      continue;
    }
    if (text[i] === '"') {
      let token = '';
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && i + 1 < text.length) i++;
        token += text[i];
        i++;
      }
      if (i >= text.length) return undefined;
      i++;
      tokens.push(token);
      continue;
    }
    let end = i;
    while (end < text.length && text[end] !== ' ' && text[end] !== '\t') end++;
    tokens.push(text.slice(i, end));
    i = end;
  }
  return tokens;
}
