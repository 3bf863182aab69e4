/*
 * replay.c
 *	  A stand-in for libFuzzer where clang's fuzzer runtime is missing: runs
 *	  a harness on every file of the given corpus directories, then on
 *	  random mutations of them (bit flips, byte changes, truncation,
 *	  extension, splices) for a bounded time.  A finding aborts (the
 *	  harness's FUZZ_ASSERT or a sanitizer), which fails the suite.
 *
 *	  replay -max_total_time=SECONDS DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_INPUT 4096

typedef struct Seed
{
	uint8_t    *data;
	size_t		len;
} Seed;

static Seed *seeds;
static size_t nseeds;

static void
load_dir(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
	{
		char		path[4096];
		FILE	   *fp;
		Seed		s;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if ((fp = fopen(path, "rb")) == NULL)
			continue;
		s.data = malloc(REPLAY_MAX_INPUT);
		s.len = fread(s.data, 1, REPLAY_MAX_INPUT, fp);
		fclose(fp);
		seeds = realloc(seeds, (nseeds + 1) * sizeof(Seed));
		seeds[nseeds++] = s;
	}
	closedir(d);
}

/* one input: a seed changed in a few random places */
static size_t
mutate(uint8_t *buf)
{
	const Seed *s = &seeds[rand() % nseeds];
	size_t		len = s->len;
	int			nmut = 1 + rand() % 4;

	memcpy(buf, s->data, len);
	for (int m = 0; m < nmut; m++)
	{
		size_t		pos = len ? (size_t) rand() % len : 0;

		switch (rand() % 6)
		{
			case 0:				/* bit flip */
				if (len)
					buf[pos] ^= 1 << (rand() % 8);
				break;
			case 1:				/* any byte */
				if (len)
					buf[pos] = rand();
				break;
			case 2:				/* a printable byte: the text forms */
				if (len)
					buf[pos] = "0123456789=,()+-/e. abcnrtz"[rand() % 27];
				break;
			case 3:				/* truncation */
				len = pos;
				break;
			case 4:				/* extension */
				while (len < REPLAY_MAX_INPUT && rand() % 4)
					buf[len++] = rand();
				break;
			case 5:				/* splice another seed's tail */
				{
					const Seed *o = &seeds[rand() % nseeds];
					size_t		from = o->len ? (size_t) rand() % o->len : 0;
					size_t		n = o->len - from;

					if (pos + n > REPLAY_MAX_INPUT)
						n = REPLAY_MAX_INPUT - pos;
					memcpy(buf + pos, o->data + from, n);
					len = pos + n;
				}
				break;
		}
	}
	return len;
}

int
main(int argc, char **argv)
{
	double		seconds = 10;
	uint8_t    *buf = malloc(REPLAY_MAX_INPUT);
	unsigned long runs = 0;
	time_t		end;

	for (int i = 1; i < argc; i++)
	{
		if (strncmp(argv[i], "-max_total_time=", 16) == 0)
			seconds = atof(argv[i] + 16);
		else if (argv[i][0] != '-')
			load_dir(argv[i]);
	}
	for (size_t i = 0; i < nseeds; i++, runs++)
	{
		/* a copy of exactly the seed's length, so that overreads are seen */
		uint8_t    *copy = malloc(seeds[i].len ? seeds[i].len : 1);

		memcpy(copy, seeds[i].data, seeds[i].len);
		LLVMFuzzerTestOneInput(copy, seeds[i].len);
		free(copy);
	}
	if (nseeds == 0)
	{
		fprintf(stderr, "replay: no seeds\n");
		return 1;
	}
	srand((unsigned) time(NULL));
	end = time(NULL) + (time_t) seconds;
	while (time(NULL) < end)
	{
		for (int j = 0; j < 1000; j++, runs++)
		{
			size_t		len = mutate(buf);
			uint8_t    *copy = malloc(len ? len : 1);

			memcpy(copy, buf, len);
			LLVMFuzzerTestOneInput(copy, len);
			free(copy);
		}
	}
	printf("Done %lu runs (replay of %zu seeds and random mutations)\n", runs, nseeds);
	return 0;
}
