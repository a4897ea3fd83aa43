#include <stdio.h>
#include <histedit.h>
#include <editline/readline.h>
