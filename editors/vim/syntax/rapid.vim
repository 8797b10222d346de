" Vim syntax for .rapid experiment files. Keep the keywords in step with
" grammar/Rapid.g4: test/Editors/tokenize.py checks.
if exists("b:current_syntax")
  finish
endif

syn keyword rapidDecl gpu stack model topology faults experiment sweep search
syn keyword rapidKeyword import over in where map dim soft hard x
syn keyword rapidConstant on off true false
syn match rapidNumber "\<[0-9]\(_\?[0-9]\)*\(\.[0-9]\(_\?[0-9]\)*\)\=\([eE][+-]\=[0-9]\+\)\="
syn match rapidUnit "\(\<[0-9][0-9_.eE+-]*\s*\)\@<=\(x\>\)\@![A-Za-z]\+\(/[A-Za-z]\+\)\="
syn match rapidUnit "%"
syn region rapidString start=+"+ skip=+\\.+ end=+"+
syn match rapidComment "//.*$"
syn region rapidComment start="/\*" end="\*/"

hi def link rapidDecl Structure
hi def link rapidKeyword Keyword
hi def link rapidConstant Boolean
hi def link rapidNumber Number
hi def link rapidUnit Type
hi def link rapidString String
hi def link rapidComment Comment

let b:current_syntax = "rapid"
