/**
 * The characters that draw nothing, for a regular expression's character class (`u` flag): format
 * characters (zero-width space and joiners, soft hyphen, bidi marks) and every other character
 * Unicode marks default-ignorable (variation selectors, the combining grapheme joiner, the
 * Mongolian and Khmer invisible marks, the Hangul fillers). Blocked words drop them; a name made
 * of nothing else is no name.
 */
export const INVISIBLE_CHARACTERS = String.raw`\p{Cf}\p{Default_Ignorable_Code_Point}`;
