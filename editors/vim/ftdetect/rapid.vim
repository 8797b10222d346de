" .rapid experiment files (rapid's language, docs/language.md).
au BufRead,BufNewFile *.rapid setfiletype rapid
