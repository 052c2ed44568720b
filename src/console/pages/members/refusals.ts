import { ApiError } from '../../../contract/errors.js';

/**
 * A domain refusal in the reader's words: the domain's message is English (the operator API's and
 * the CLI's), so a page says the catalogue's message that `say` picks for it, by its code and its
 * words; a refusal `say` does not know keeps the domain's message. The code, status and headers stay.
 */
export async function inWords<T>(work: () => Promise<T>, say: (err: ApiError) => string | null): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError && err.statusCode < 500) {
      const words = say(err);
      if (words !== null) throw new ApiError(err.code, words, err.headers);
    }
    throw err;
  }
}
