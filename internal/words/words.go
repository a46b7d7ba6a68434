package words

import (
	"strconv"
	"strings"
)

// Plural is n and word, the word with an s unless n is 1: "1 request", "3 requests".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// FirstLine is s up to its first line break, for one-line summaries of a multi-line message.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
