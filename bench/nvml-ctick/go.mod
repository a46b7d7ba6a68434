module ctick

go 1.26
