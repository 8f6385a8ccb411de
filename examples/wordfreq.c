/* Bundled example: counts words read from a file named on the command line. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char word[32];
    int count;
    struct entry *next;
};

static struct entry *table[256];

static unsigned hash(const char *s) {
    unsigned h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h % 256;
}

static struct entry *lookup(const char *w) {
    struct entry *e;
    for (e = table[hash(w)]; e != NULL; e = e->next) {
        if (strcmp(e->word, w) == 0)
            return e;
    }
    e = malloc(sizeof *e);
    if (!e)
        exit(1);
    strcpy(e->word, w);
    e->count = 0;
    e->next = table[hash(w)];
    table[hash(w)] = e;
    return e;
}

int main(int argc, char **argv) {
    char buf[32];
    int n = 0, c;
    FILE *f;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    f = fopen(argv[1], "r");
    if (f == NULL)
        return 1;
    do {
        c = fgetc(f);
        if (isalpha(c) && n < 31) {
            buf[n++] = (char)tolower(c);
        } else if (n > 0) {
            buf[n] = '\0';
            lookup(buf)->count++;
            n = 0;
        }
    } while (c != EOF);
    fclose(f);
    printf(argv[1]);
    return 0;
}
