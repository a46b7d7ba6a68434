// Package words holds the few wording rules that messages, reports and summaries share, so
// that each is written once: a count with its noun, and the first line of a message.
package words
